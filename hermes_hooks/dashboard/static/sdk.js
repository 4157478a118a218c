/* The dashboard's plugin SDK: what Hermes' dashboard gives a plugin's script.
 *
 * window.__HERMES_PLUGIN_SDK__ holds React (a small React-compatible renderer written for this
 * dashboard: createElement, Fragment and the hooks), hooks, components (Card, Button, ...),
 * utils.cn and fetchJSON; window.__HERMES_PLUGINS__.register(name, Component) adds a tab's
 * page. Elements are kept per place in the tree, so an input keeps its focus across renders.
 */
(function () {
  "use strict";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const Fragment = { fragment: true };

  function flat(items, out) {
    for (const item of items) {
      if (Array.isArray(item)) flat(item, out);
      else if (item !== null && item !== undefined && item !== false && item !== true) out.push(item);
    }
    return out;
  }

  function createElement(type, props) {
    const children = flat(Array.prototype.slice.call(arguments, 2), []);
    const all = Object.assign({}, props || {});
    if (children.length === 0 && all.children !== undefined) {
      flat([all.children], children);
    }
    return { type: type, props: all, children: children };
  }

  // -- hooks -------------------------------------------------------------------------------
  let current = null; // {hooks, index}
  const roots = new Set();

  function slot() {
    if (!current) throw new Error("a hook was called outside a component");
    const i = current.index++;
    return { hooks: current.hooks, i: i, root: current.root };
  }

  function useState(initial) {
    const s = slot();
    if (!(s.i in s.hooks)) {
      const value = typeof initial === "function" ? initial() : initial;
      const cell = { value: value };
      cell.set = function (next) {
        const v = typeof next === "function" ? next(cell.value) : next;
        if (Object.is(v, cell.value)) return;
        cell.value = v;
        s.root.schedule();
      };
      s.hooks[s.i] = cell;
    }
    const cell = s.hooks[s.i];
    return [cell.value, cell.set];
  }

  function changed(a, b) {
    if (!a || !b || a.length !== b.length) return true;
    for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return true;
    return false;
  }

  function useEffect(effect, deps) {
    const s = slot();
    let cell = s.hooks[s.i];
    const first = !cell;
    if (first) cell = s.hooks[s.i] = { deps: null, cleanup: null };
    if (first || deps === undefined || changed(cell.deps, deps)) {
      s.root.effects.push(function () {
        if (typeof cell.cleanup === "function") cell.cleanup();
        const result = effect();
        cell.cleanup = typeof result === "function" ? result : null;
      });
      cell.deps = deps === undefined ? null : deps.slice();
    }
  }

  function useRef(initial) {
    const s = slot();
    return s.hooks[s.i] || (s.hooks[s.i] = { current: initial });
  }

  function useMemo(compute, deps) {
    const s = slot();
    const cell = s.hooks[s.i];
    if (!cell || changed(cell.deps, deps)) {
      s.hooks[s.i] = { value: compute(), deps: deps ? deps.slice() : null };
    }
    return s.hooks[s.i].value;
  }

  function useCallback(fn, deps) { return useMemo(function () { return fn; }, deps); }
  function useContext(context) { return context ? context._value : undefined; }
  function createContext(value) {
    const context = { _value: value };
    context.Provider = function (props) { context._value = props.value; return props.children; };
    return context;
  }

  // -- rendering ---------------------------------------------------------------------------
  function Root(container, Component, props) {
    this.container = container;
    this.element = createElement(Component, props || {});
    this.states = new Map(); // path -> hooks array
    this.nodes = new Map(); // path -> DOM node
    this.effects = [];
    this.pending = false;
    this.alive = true;
  }

  Root.prototype.schedule = function () {
    if (this.pending || !this.alive) return;
    this.pending = true;
    const root = this;
    Promise.resolve().then(function () { root.pending = false; root.render(); });
  };

  Root.prototype.render = function () {
    if (!this.alive) return;
    this.seen = new Set();
    this.effects = [];
    const built = this.build(this.element, "r", null);
    sync(this.container, built);
    for (const [path, hooks] of this.states) {
      if (!this.seen.has(path)) {
        for (const cell of hooks) if (cell && typeof cell.cleanup === "function") cell.cleanup();
        this.states.delete(path);
      }
    }
    for (const path of Array.from(this.nodes.keys())) {
      if (!this.seen.has(path)) this.nodes.delete(path);
    }
    const effects = this.effects;
    this.effects = [];
    for (const run of effects) {
      try { run(); } catch (err) { console.error(err); }
    }
  };

  Root.prototype.unmount = function () {
    this.alive = false;
    for (const hooks of this.states.values()) {
      for (const cell of hooks) if (cell && typeof cell.cleanup === "function") cell.cleanup();
    }
    this.states.clear();
    this.container.replaceChildren();
    roots.delete(this);
  };

  Root.prototype.build = function (node, path, ns) {
    // Returns a list of DOM nodes for `node` at `path`.
    if (typeof node === "string" || typeof node === "number") {
      this.seen.add(path);
      let text = this.nodes.get(path);
      if (!text || text.nodeType !== 3) { text = document.createTextNode(""); this.nodes.set(path, text); }
      if (text.data !== String(node)) text.data = String(node);
      return [text];
    }
    if (!node || typeof node !== "object") return [];
    const type = node.type;
    const key = node.props && node.props.key !== undefined ? "k" + node.props.key : "";
    if (type === Fragment || (type && type.fragment)) {
      return this.children(node.children, path, ns);
    }
    if (typeof type === "function") {
      const here = path + ":" + (type.name || "c") + key;
      this.seen.add(here);
      let hooks = this.states.get(here);
      if (!hooks) { hooks = []; this.states.set(here, hooks); }
      const saved = current;
      current = { hooks: hooks, index: 0, root: this };
      let out;
      try {
        const props = Object.assign({}, node.props, { children: node.children.length === 1 ? node.children[0] : node.children });
        out = type(props);
      } finally { current = saved; }
      return this.build(out, here + "/", ns);
    }
    if (Array.isArray(node)) return this.children(node, path, ns);
    const here = path + "<" + type + key;
    this.seen.add(here);
    const childNs = type === "svg" ? SVG_NS : (ns === SVG_NS && type !== "foreignObject" ? SVG_NS : null);
    let el = this.nodes.get(here);
    if (!el || el.nodeType !== 1 || el.localName !== String(type).toLowerCase()) {
      el = childNs ? document.createElementNS(SVG_NS, type) : document.createElement(type);
      el.__hh = { on: {}, attrs: {}, managed: 0 };
      this.nodes.set(here, el);
    }
    patch(el, node.props || {}, !!childNs);
    const kids = this.children(node.children, here + ">", childNs);
    if (kids.length > 0 || el.__hh.managed > 0) sync(el, kids);
    el.__hh.managed = kids.length;
    const ref = node.props && node.props.ref;
    if (ref) {
      if (typeof ref === "function") ref(el); else ref.current = el;
    }
    return [el];
  };

  Root.prototype.children = function (list, path, ns) {
    const out = [];
    for (let i = 0; i < list.length; i++) {
      const child = list[i];
      const key = child && child.props && child.props.key !== undefined ? "k" + child.props.key : String(i);
      for (const dom of this.build(child, path + "." + key, ns)) out.push(dom);
    }
    return out;
  };

  function sync(parent, wanted) {
    const now = parent.childNodes;
    let same = now.length === wanted.length;
    for (let i = 0; same && i < wanted.length; i++) same = now[i] === wanted[i];
    if (!same) parent.replaceChildren.apply(parent, wanted);
  }

  function patch(el, props, svg) {
    const state = el.__hh;
    const seen = {};
    for (const name in props) {
      if (name === "children" || name === "key" || name === "ref") continue;
      const value = props[name];
      if (/^on[A-Z]/.test(name)) {
        let event = name.slice(2).toLowerCase();
        if (event === "doubleclick") event = "dblclick";
        if (event === "change" && (el.localName === "input" || el.localName === "textarea")) event = "input";
        if (state.on[event] !== value) {
          if (state.on[event]) el.removeEventListener(event, state.on[event]);
          if (typeof value === "function") el.addEventListener(event, value);
          state.on[event] = value;
        }
        seen["on:" + event] = true;
        continue;
      }
      if (name === "style" && value && typeof value === "object") {
        for (const prop in value) {
          const v = value[prop];
          const css = typeof v === "number" && !/^(opacity|zIndex|flex|fontWeight|lineHeight)$/.test(prop) ? v + "px" : v;
          if (prop.indexOf("-") >= 0) el.style.setProperty(prop, css); else el.style[prop] = css;
        }
        seen.style = true;
        continue;
      }
      if (name === "dangerouslySetInnerHTML") continue; // plugins get no raw HTML here
      if (!svg && (name === "value" || name === "checked" || name === "selected" || name === "disabled")) {
        if (el[name] !== value) el[name] = value;
        seen[name] = true;
        continue;
      }
      let attr = name === "className" ? "class" : name === "htmlFor" ? "for" : name;
      if (svg && attr !== "viewBox") attr = attr.replace(/[A-Z]/g, function (c) { return "-" + c.toLowerCase(); });
      if (value === false || value === null || value === undefined) {
        if (state.attrs[attr] !== undefined) { el.removeAttribute(attr); delete state.attrs[attr]; }
        continue;
      }
      const text = value === true ? "" : String(value);
      if (state.attrs[attr] !== text) { el.setAttribute(attr, text); state.attrs[attr] = text; }
      seen["a:" + attr] = true;
    }
    for (const attr in state.attrs) {
      if (!seen["a:" + attr]) { el.removeAttribute(attr); delete state.attrs[attr]; }
    }
    for (const event in state.on) {
      if (!seen["on:" + event] && state.on[event]) { el.removeEventListener(event, state.on[event]); delete state.on[event]; }
    }
  }

  function mount(container, Component, props) {
    const root = new Root(container, Component, props);
    roots.add(root);
    root.render();
    return root;
  }

  // -- what a plugin's script gets -----------------------------------------------------------
  function cn() {
    const out = [];
    for (const item of arguments) {
      if (!item) continue;
      if (typeof item === "string") out.push(item);
      else if (Array.isArray(item)) out.push(cn.apply(null, item));
      else if (typeof item === "object") for (const k in item) if (item[k]) out.push(k);
    }
    return out.filter(Boolean).join(" ");
  }

  function csrf() {
    const found = document.cookie.split("; ").find(function (c) { return c.indexOf("hermes_csrf=") === 0; });
    return found ? decodeURIComponent(found.slice("hermes_csrf=".length)) : "";
  }

  async function fetchJSON(url, options) {
    const opts = Object.assign({ credentials: "same-origin" }, options || {});
    const method = (opts.method || "GET").toUpperCase();
    const headers = Object.assign({ Accept: "application/json" }, opts.headers || {});
    if (method !== "GET" && method !== "HEAD") headers["X-Hermes-CSRF"] = csrf();
    if (opts.body && typeof opts.body === "object" && !(opts.body instanceof FormData) && !(opts.body instanceof Blob)) {
      opts.body = JSON.stringify(opts.body);
      headers["Content-Type"] = "application/json";
    }
    opts.headers = headers;
    const response = await fetch(url, opts);
    const text = await response.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (_) { body = text; }
    if (!response.ok) {
      const detail = body && (body.detail || body.error) ? (body.detail || body.error) : response.statusText;
      const err = new Error(response.status + ": " + (typeof detail === "string" ? detail : JSON.stringify(detail)));
      err.status = response.status;
      err.body = body;
      throw err;
    }
    return body;
  }

  function box(tag, base) {
    return function (props) {
      const rest = Object.assign({}, props);
      delete rest.children;
      rest.className = cn(base, props.className);
      return createElement(tag, rest, props.children);
    };
  }

  const components = {
    Card: box("div", "card"),
    CardHeader: box("div", "card-header"),
    CardTitle: box("h3", "card-title"),
    CardDescription: box("p", "card-description"),
    CardContent: box("div", "card-content"),
    CardFooter: box("div", "card-footer"),
    Badge: box("span", "badge"),
    Button: function (props) {
      const rest = Object.assign({ type: "button" }, props);
      delete rest.children; delete rest.variant; delete rest.size;
      rest.className = cn("button", props.variant && "button-" + props.variant, props.className);
      return createElement("button", rest, props.children);
    },
    Input: function (props) { return createElement("input", Object.assign({}, props, { className: cn("input", props.className) })); },
    Label: box("label", "label"),
    Separator: function (props) { return createElement("hr", { className: cn("separator", props.className) }); },
    Select: function (props) {
      const rest = Object.assign({}, props);
      delete rest.children; delete rest.onValueChange;
      if (props.onValueChange) rest.onChange = function (e) { props.onValueChange(e.target.value); };
      return createElement("select", rest, props.children);
    },
    SelectOption: box("option", ""),
  };

  function timeAgo(seconds) {
    const delta = Math.max(0, Date.now() / 1000 - Number(seconds || 0));
    if (delta < 60) return Math.floor(delta) + "s ago";
    if (delta < 3600) return Math.floor(delta / 60) + "m ago";
    if (delta < 86400) return Math.floor(delta / 3600) + "h ago";
    return Math.floor(delta / 86400) + "d ago";
  }

  const React = {
    createElement: createElement, Fragment: Fragment, useState: useState, useEffect: useEffect,
    useRef: useRef, useMemo: useMemo, useCallback: useCallback, useContext: useContext,
    createContext: createContext, useLayoutEffect: useEffect,
  };

  const registered = {};
  const listeners = [];
  window.__HERMES_PLUGINS__ = {
    register: function (name, Component) {
      registered[name] = Component;
      for (const listener of listeners.slice()) listener(name);
    },
    registerSlot: function () {},
    get: function (name) { return registered[name]; },
    onRegister: function (listener) { listeners.push(listener); },
  };
  window.__HERMES_PLUGIN_SDK__ = {
    React: React,
    hooks: { useState: useState, useEffect: useEffect, useRef: useRef, useMemo: useMemo, useCallback: useCallback, useContext: useContext },
    components: components,
    utils: { cn: cn, timeAgo: timeAgo },
    fetchJSON: fetchJSON,
    mount: mount,
    csrf: csrf,
  };
})();
