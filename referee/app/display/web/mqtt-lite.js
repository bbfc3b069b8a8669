// A small MQTT 3.1.1 subscriber over WebSocket (subprotocol "mqtt"), enough for a display:
// CONNECT with user and password, SUBSCRIBE, UNSUBSCRIBE, incoming PUBLISH at QoS 0 and 1
// (acknowledged with PUBACK), keepalive pings, and reconnection with a capped backoff that
// subscribes again. It never publishes: displays only read the feed.
"use strict";

(function (global) {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const CONNACK_REASONS = {
    1: "unacceptable protocol version",
    2: "client id rejected",
    3: "broker unavailable",
    4: "bad user name or password",
    5: "not authorised",
  };

  function utf8(s) {
    const b = enc.encode(s);
    return [b.length >> 8, b.length & 255, ...b];
  }

  function packet(first, body) {
    const len = [];
    let n = body.length;
    do {
      let digit = n % 128;
      n = Math.floor(n / 128);
      if (n > 0) digit |= 128;
      len.push(digit);
    } while (n > 0);
    const out = new Uint8Array(1 + len.length + body.length);
    out[0] = first;
    out.set(len, 1);
    out.set(body, 1 + len.length);
    return out;
  }

  class MqttLite {
    // url: ws:// or wss:// URL; opts: {clientId, username, password, keepalive (s),
    // backoff: [first ms, longest ms]}.
    constructor(url, opts) {
      this.url = url;
      this.opts = Object.assign({ keepalive: 20, backoff: [100, 500] }, opts || {});
      if (!this.opts.clientId) {
        this.opts.clientId = "display-" + Math.random().toString(16).slice(2, 10);
      }
      this.handlers = {};
      this.subs = new Map();
      this.nextId = 1;
      this.buf = new Uint8Array(0);
      this.delay = this.opts.backoff[0];
      this.connected = false;
      this.closed = false;
      this.ws = null;
      this.pinger = null;
    }

    on(event, fn) {
      this.handlers[event] = fn;
      return this;
    }

    emit(event, ...args) {
      const fn = this.handlers[event];
      if (!fn) return;
      try {
        fn(...args);
      } catch (e) {
        console.error(e);
      }
    }

    connect() {
      this.closed = false;
      let ws;
      try {
        ws = new WebSocket(this.url, ["mqtt"]);
      } catch (e) {
        this.emit("error", String(e));
        this._down();
        return;
      }
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      this.buf = new Uint8Array(0);
      ws.onopen = () => this._send(this._connectPacket());
      ws.onmessage = (e) => this._data(new Uint8Array(e.data));
      ws.onclose = () => {
        if (this.ws === ws) this._down();
      };
      ws.onerror = () => {}; // onclose follows
    }

    close() {
      this.closed = true;
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this._send(packet(0xe0, []));
      if (this.ws) this.ws.close();
    }

    subscribe(topic, qos) {
      this.subs.set(topic, qos || 0);
      if (this.connected) this._subscribe([[topic, qos || 0]]);
    }

    // Ask the broker for a topic's retained message again: unsubscribe, then subscribe.
    resubscribe(topic) {
      if (!this.connected) return;
      const id = this._id();
      this._send(packet(0xa2, [id >> 8, id & 255, ...utf8(topic)]));
      this._subscribe([[topic, this.subs.get(topic) || 0]]);
    }

    _id() {
      const id = this.nextId;
      this.nextId = (this.nextId % 65535) + 1;
      return id;
    }

    _send(bytes) {
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(bytes);
    }

    _subscribe(list) {
      const id = this._id();
      const body = [id >> 8, id & 255];
      for (const [topic, qos] of list) body.push(...utf8(topic), qos);
      this._send(packet(0x82, body));
    }

    _connectPacket() {
      const o = this.opts;
      let flags = 0x02; // clean session
      const payload = utf8(o.clientId);
      if (o.username != null && o.username !== "") {
        flags |= 0x80;
        payload.push(...utf8(o.username));
        if (o.password != null) {
          flags |= 0x40;
          payload.push(...utf8(o.password));
        }
      }
      const ka = o.keepalive;
      return packet(0x10, [...utf8("MQTT"), 4, flags, ka >> 8, ka & 255, ...payload]);
    }

    _data(bytes) {
      const joined = new Uint8Array(this.buf.length + bytes.length);
      joined.set(this.buf, 0);
      joined.set(bytes, this.buf.length);
      this.buf = joined;
      for (;;) {
        if (this.buf.length < 2) return;
        let remaining = 0;
        let mult = 1;
        let i = 1;
        for (;;) {
          if (i >= this.buf.length) return; // length not complete yet
          const digit = this.buf[i++];
          remaining += (digit & 127) * mult;
          mult *= 128;
          if ((digit & 128) === 0) break;
          if (i > 4) {
            this.ws.close();
            return;
          }
        }
        const total = i + remaining;
        if (this.buf.length < total) return;
        const first = this.buf[0];
        const body = this.buf.slice(i, total);
        this.buf = this.buf.slice(total);
        this._packet(first, body);
      }
    }

    _packet(first, body) {
      const type = first >> 4;
      if (type === 2) {
        const rc = body[1];
        if (rc !== 0) {
          this.emit("error", "broker refused the connection: " + (CONNACK_REASONS[rc] || rc));
          this.ws.close();
          return;
        }
        this.connected = true;
        this.delay = this.opts.backoff[0];
        clearInterval(this.pinger);
        this.pinger = setInterval(() => this._send(packet(0xc0, [])),
          (this.opts.keepalive * 1000) / 2);
        if (this.subs.size) this._subscribe([...this.subs.entries()]);
        this.emit("connect");
      } else if (type === 3) {
        const qos = (first >> 1) & 3;
        const retain = (first & 1) === 1;
        const tlen = (body[0] << 8) | body[1];
        const topic = dec.decode(body.subarray(2, 2 + tlen));
        let p = 2 + tlen;
        if (qos > 0) {
          const id = (body[p] << 8) | body[p + 1];
          p += 2;
          // Subscriptions ask for QoS 1 at most, so QoS 2 does not arrive; acknowledge QoS 1.
          if (qos === 1) this._send(packet(0x40, [id >> 8, id & 255]));
        }
        this.emit("message", topic, body.subarray(p), retain);
      } else if (type === 9) {
        for (let k = 2; k < body.length; k++) {
          if (body[k] === 0x80) this.emit("error", "the broker refused a subscription");
        }
      }
      // UNSUBACK (11) and PINGRESP (13) need nothing.
    }

    _down() {
      const was = this.connected;
      this.connected = false;
      clearInterval(this.pinger);
      this.pinger = null;
      this.ws = null;
      if (was || !this.closed) this.emit("close");
      if (this.closed) return;
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, this.opts.backoff[1]);
    }
  }

  global.MqttLite = MqttLite;
})(typeof window !== "undefined" ? window : globalThis);
