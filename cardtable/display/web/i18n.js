// The page's own words in its language (cardtable/i18n.py). The words are English in the
// sources: t("Pile") and tn("{n} card", "{n} cards", n) in the scripts, data-i18n on an
// element of the HTML (its text) and data-i18n-attrs="alt aria-label" (those attributes).
// Babel extracts them into cardtable/locale/pages.pot; the page fetches its language's words
// as catalog.json?lang=sv: {lang, messages, plural} (plural: the form of each count 0..199, so
// that no plural rule is written here). Everything else the page shows (verdicts, names,
// counts) comes in words from the server, made in the scene's language.
"use strict";

const I18N = { lang: "en", messages: {}, plural: null, loading: null };

// The page's language asked for in its address (?lang=sv), or null: the table's.
function askedLanguage() {
  const lang = new URLSearchParams(location.search).get("lang");
  return lang && /^[A-Za-z_-]{2,12}$/.test(lang) ? lang : null;
}

// The address of a resource of this page in the same language (events?lang=sv).
function withLanguage(path) {
  const lang = askedLanguage();
  return lang ? path + (path.includes("?") ? "&" : "?") + "lang=" + encodeURIComponent(lang) : path;
}

// Marks a message for translation where it is written (a table); t() says it where it is used.
function N_(message) { return message; }

function t(message) {
  const m = I18N.messages[message];
  return typeof m === "string" && m ? m : message;
}

function pluralForm(n) {
  const table = I18N.plural;
  if (!table || !Number.isInteger(n) || n < 0) return n === 1 ? 0 : 1;
  return n < table.length ? table[n] : table[100 + (n % 100)];
}

function tn(singular, plural, n) {
  const forms = I18N.messages[singular];
  const i = pluralForm(n);
  if (Array.isArray(forms) && forms[i]) return forms[i];
  return n === 1 ? singular : plural;
}

// A message with its {placeholders} filled from values (text only).
function fmt(message, values) {
  return message.replace(/\{(\w+)\}/g, (all, key) => (key in values ? String(values[key]) : all));
}

// A message as nodes: each {placeholder} an element (a card, a suit) or text of values.
function fill(message, values) {
  const out = [];
  let last = 0;
  message.replace(/\{(\w+)\}/g, (all, key, at) => {
    if (!(key in values)) return all;
    if (at > last) out.push(document.createTextNode(message.slice(last, at)));
    const v = values[key];
    if (Array.isArray(v)) out.push(...v.map((x) => (typeof x === "string" ? document.createTextNode(x) : x)));
    else out.push(typeof v === "string" ? document.createTextNode(v) : v);
    last = at + all.length;
    return all;
  });
  if (last < message.length) out.push(document.createTextNode(message.slice(last)));
  return out;
}

// The page's marked words in the language now loaded (the English of the HTML is kept as the
// message, so a page switched back and forth translates from it again).
function translatePage(root) {
  for (const e of (root || document).querySelectorAll("[data-i18n]")) {
    if (e.dataset.i18nSource == null) e.dataset.i18nSource = e.textContent.replace(/\s+/g, " ").trim();
    e.textContent = t(e.dataset.i18nSource);
  }
  for (const e of (root || document).querySelectorAll("[data-i18n-attrs]")) {
    for (const name of e.dataset.i18nAttrs.split(/\s+/)) {
      const key = "i18nSource" + name.replace(/(^|-)(\w)/g, (a, b, c) => c.toUpperCase());
      if (e.dataset[key] == null) e.dataset[key] = (e.getAttribute(name) || "").replace(/\s+/g, " ").trim();
      if (e.dataset[key]) e.setAttribute(name, t(e.dataset[key]));
    }
  }
  document.documentElement.lang = I18N.lang;
}

// Load the words of ``lang`` (once; a language without words keeps English): a promise of
// whether the page's language changed. English needs no catalog.
function loadLanguage(lang) {
  if (!lang || lang === I18N.lang) return Promise.resolve(false);
  if (I18N.loading && I18N.loading.lang === lang) return I18N.loading.promise;
  const words = lang === "en" ? Promise.resolve(null)
    : fetch("catalog.json?lang=" + encodeURIComponent(lang), { cache: "default" })
      .then((r) => (r.ok ? r.json() : null), () => null);
  const promise = words.then((catalog) => {
    if (!I18N.loading || I18N.loading.lang !== lang) return false;
    I18N.loading = null;
    I18N.lang = lang;
    I18N.messages = (catalog && catalog.messages) || {};
    I18N.plural = (catalog && catalog.plural) || null;
    translatePage();
    return true;
  });
  I18N.loading = { lang: lang, promise: promise };
  return promise;
}
