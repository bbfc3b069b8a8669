"""The camera's synthetic table: card artwork (:mod:`.artwork`), seeded photographs of a pile
(:mod:`.scene`), the virtual camera over a virtual table (:mod:`.virtual`, which the full-stack
simulation films with) and the recogniser's evaluation on rendered scenes (:mod:`.evaluate`)."""
