/* The dashboard's pages: plugins, hooks, tools, memory, doctor, kanban and the plugins' tabs.
 * Plain DOM building; the data comes from /api/dashboard/*. No secret is ever in this page.
 */
(function () {
  "use strict";
  const SDK = window.__HERMES_PLUGIN_SDK__;
  const main = document.getElementById("main");
  const nav = document.getElementById("nav");
  let timer = null;
  let mounted = null;
  let tabs = [];

  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const name in attrs || {}) {
      const value = attrs[name];
      if (value === null || value === undefined || value === false) continue;
      if (name.indexOf("on") === 0) el.addEventListener(name.slice(2), value);
      else if (name === "text") el.textContent = value;
      else el.setAttribute(name === "cls" ? "class" : name, value === true ? "" : value);
    }
    for (let i = 2; i < arguments.length; i++) {
      const child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) child.forEach(function (c) { if (c) el.append(c); });
      else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const api = SDK.fetchJSON;
  function post(url, body) { return api(url, { method: "POST", body: body || {} }); }

  function table(headers, rows) {
    return h("table", null,
      h("thead", null, h("tr", null, headers.map(function (t) { return h("th", { text: t }); }))),
      h("tbody", null, rows));
  }

  function badge(text, kind) { return h("span", { cls: "badge badge-" + (kind || text).replace(/\s+/g, "-") }, text); }

  function show(content) { main.replaceChildren(content); }

  function failure(err) { show(h("p", { cls: "error", role: "alert" }, String(err))); }

  // -- plugins -------------------------------------------------------------------------------
  async function pluginsPage() {
    const plugins = await api("/api/dashboard/plugins");
    const output = h("div", { id: "plugin-output", cls: "output" });
    const rows = plugins.map(function (p) {
      const regs = p.registrations || {};
      const what = [];
      ["tools", "commands", "cli_commands", "skills", "providers"].forEach(function (k) {
        if (regs[k] && regs[k].length) what.push(k.replace("_", " ") + ": " + regs[k].join(", "));
      });
      if (p.hooks && p.hooks.length) what.push("hooks: " + p.hooks.join(", "));
      const enabled = p.configured === "enabled";
      const toggle = h("button", {
        cls: "button", "data-action": enabled ? "disable" : "enable",
        onclick: async function () {
          toggle.disabled = true;
          try {
            const done = await post("/api/dashboard/plugins/" + encodeURIComponent(p.key) + "/" + (enabled ? "disable" : "enable"));
            output.textContent = "Plugin " + done.key + (done.enabled ? " enabled" : " disabled") + ": status " + done.status + (done.error ? " (" + done.error + ")" : "");
            show(await pluginsPage());
          } catch (err) { output.textContent = String(err); toggle.disabled = false; }
        },
      }, enabled ? "Disable" : "Enable");
      const doctor = h("button", {
        cls: "button button-outline", "data-action": "doctor",
        onclick: async function () {
          output.textContent = "Checking " + p.key + "…";
          try {
            const report = await post("/api/dashboard/plugins/" + encodeURIComponent(p.key) + "/doctor");
            const lines = (report.findings || []).map(function (f) { return f.level + " [" + f.check + "] " + f.message; });
            output.textContent = p.key + ": " + (lines.length ? lines.join("\n") : "no problem found");
          } catch (err) { output.textContent = String(err); }
        },
      }, "Doctor");
      const why = p.error || p.reason || "";
      return h("tr", { "data-plugin": p.key, "data-status": p.status },
        h("td", null, h("strong", { text: p.name }), p.key !== p.name ? h("div", { cls: "muted", text: p.key }) : null),
        h("td", null, badge(p.status), h("div", { cls: "muted", text: "config: " + p.configured })),
        h("td", { cls: "reason", text: why }),
        h("td", { text: p.version || "" }),
        h("td", { text: p.source + (p.kind ? " · " + p.kind : "") }),
        h("td", { cls: "small", text: what.join("; ") }),
        h("td", null, toggle, " ", doctor));
    });
    return h("section", null, h("h2", { text: "Plugins" }),
      table(["plugin", "status", "reason", "version", "source", "registered", ""], rows), output);
  }

  // -- hooks ---------------------------------------------------------------------------------
  function chart(hooks, perImpl) {
    const bars = [];
    hooks.forEach(function (hook) {
      if (perImpl) {
        hook.impls.forEach(function (impl) {
          if (impl.seconds) bars.push({ label: hook.hook + " · " + impl.plugin, value: impl.seconds });
        });
      } else if (hook.seconds) bars.push({ label: hook.hook, value: hook.seconds });
    });
    bars.sort(function (a, b) { return b.value - a.value; });
    const top = bars.slice(0, 15);
    const max = top.reduce(function (m, b) { return Math.max(m, b.value); }, 0) || 1;
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const rowHeight = 22;
    svg.setAttribute("viewBox", "0 0 640 " + Math.max(rowHeight, top.length * rowHeight));
    svg.setAttribute("class", "chart");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "time spent per " + (perImpl ? "implementation" : "hook"));
    top.forEach(function (bar, i) {
      const y = i * rowHeight;
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", "260"); rect.setAttribute("y", String(y + 4));
      rect.setAttribute("height", "14"); rect.setAttribute("width", String(Math.max(1, 300 * bar.value / max)));
      rect.setAttribute("class", "bar");
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", "0"); label.setAttribute("y", String(y + 16)); label.textContent = bar.label;
      const value = document.createElementNS(ns, "text");
      value.setAttribute("x", String(266 + 300 * bar.value / max)); value.setAttribute("y", String(y + 16));
      value.textContent = (bar.value * 1000).toFixed(2) + " ms";
      svg.append(rect, label, value);
    });
    return top.length ? svg : h("p", { cls: "muted", text: "No hook has been called since the dashboard started." });
  }

  async function hooksPage() {
    const data = await api("/api/dashboard/hooks");
    const called = data.hooks.filter(function (x) { return x.impls.length; });
    const sections = called.map(function (hook) {
      const rows = hook.impls.map(function (impl) {
        return h("tr", { "data-plugin": impl.plugin },
          h("td", { text: impl.position }), h("td", { text: impl.plugin }),
          h("td", { cls: "small", text: impl.function }),
          h("td", { cls: "calls", text: impl.calls }),
          h("td", { text: impl.plugin_errors }), h("td", { text: impl.plugin_timeouts }),
          h("td", { text: impl.seconds === null ? "—" : (impl.seconds * 1000).toFixed(2) + " ms" }));
      });
      return h("section", { cls: "hook", "data-hook": hook.hook },
        h("h3", null, hook.hook, " ", h("span", { cls: "muted", text: hook.mode + " · " + hook.calls + " calls · " + (hook.seconds * 1000).toFixed(2) + " ms" })),
        table(["#", "plugin", "function", "calls", "plugin errors", "plugin timeouts", "time"], rows));
    });
    const since = data.since ? new Date(data.since * 1000).toLocaleTimeString() : "";
    return (h("section", null, h("h2", { text: "Hooks" }),
      h("p", { cls: "muted", text: "Implementations in the order they are called; figures since " + since + "." }),
      h("h3", { text: data.per_implementation_time ? "Time per implementation" : "Time per hook" }),
      chart(data.hooks, data.per_implementation_time), sections));
  }

  // -- tools and families ----------------------------------------------------------------------
  async function toolsPage() {
    const data = await api("/api/dashboard/tools");
    const rows = data.tools.map(function (t) {
      return h("tr", { "data-tool": t.name }, h("td", { text: t.name }), h("td", { text: t.toolset }),
        h("td", { text: t.owner }), h("td", null, badge(t.available ? "offered" : "not offered")),
        h("td", { cls: "reason", text: t.reason || "" }));
    });
    const families = data.families.map(function (f) {
      const select = h("select", { "aria-label": "provider for " + f.title });
      (f.providers || []).forEach(function (p) {
        const opt = h("option", { value: p.name, text: p.name + (p.available === false ? " (unavailable)" : "") });
        if (p.name === f.active) opt.selected = true;
        select.append(opt);
      });
      const said = h("span", { cls: "muted" });
      const save = h("button", { cls: "button", onclick: async function () {
        try {
          await post("/api/dashboard/families/" + f.family + "/provider", { provider: select.value });
          said.textContent = " saved: " + select.value;
        } catch (err) { said.textContent = " " + String(err); }
      } }, "Choose");
      const providers = (f.providers || []).map(function (p) {
        return h("li", null, p.name, " ", badge(p.available === false ? "unavailable" : "available"), p.reason ? " " + p.reason : "");
      });
      return h("section", { cls: "family", "data-family": f.family },
        h("h3", null, f.title, " ", h("span", { cls: "muted", text: "active: " + (f.active || "none") + (f.error ? " · " + f.error : "") })),
        h("ul", null, providers), providers.length ? h("p", null, select, " ", save, said) : null);
    });
    return (h("section", null, h("h2", { text: "Tools" }),
      table(["tool", "toolset", "owner", "offered", "why not"], rows),
      h("h2", { text: "Provider families" }), families));
  }

  // -- memory ----------------------------------------------------------------------------------
  async function memoryPage(query) {
    const data = await api("/api/dashboard/memory" + (query ? "?q=" + encodeURIComponent(query) : ""));
    const input = h("input", { cls: "input", type: "search", placeholder: "search facts", value: data.query, "aria-label": "search facts" });
    const form = h("form", { onsubmit: function (e) { e.preventDefault(); memoryPage(input.value).then(show, failure); } }, input, " ", h("button", { cls: "button", type: "submit" }, "Search"));
    const rows = data.facts.map(function (f) {
      return h("tr", { "data-fact": f.id }, h("td", { text: f.id }), h("td", { text: f.content }),
        h("td", { text: f.target }), h("td", { cls: "small", text: f.created_at }),
        h("td", null, h("button", { cls: "button button-outline", onclick: async function () {
          await post("/api/dashboard/memory/" + f.id + "/forget");
          memoryPage(input.value).then(show, failure);
        } }, "Forget")));
    });
    const status = data.status || {};
    return (h("section", null, h("h2", { text: "Memory" }),
      h("p", { cls: "muted", text: "external provider: " + (status.provider || "none") + (status.error ? " · " + status.error : "") }),
      form, rows.length ? table(["id", "fact", "target", "written", ""], rows) : h("p", { cls: "muted", text: "No facts" + (data.query ? " match." : " yet.") })));
  }

  // -- doctor ----------------------------------------------------------------------------------
  async function doctorPage() {
    const data = await api("/api/dashboard/doctor");
    const facts = Object.keys(data.facts).map(function (k) { return h("tr", null, h("th", { text: k }), h("td", { text: data.facts[k] })); });
    const findings = data.findings.map(function (f) {
      return h("tr", null, h("td", null, badge(f.level)), h("td", { text: f.check }), h("td", { text: f.message }), h("td", { cls: "small", text: f.file || "" }));
    });
    return (h("section", null, h("h2", { text: "Doctor" }), h("p", null, badge(data.ok ? "healthy" : "problems")),
      h("table", null, h("tbody", null, facts)),
      findings.length ? table(["level", "check", "finding", "where"], findings) : h("p", { cls: "muted", text: "No problem found." })));
  }

  // -- kanban ----------------------------------------------------------------------------------
  async function kanbanPage() {
    const data = await api("/api/dashboard/kanban");
    if (!data.available) return h("section", null, h("h2", { text: "Kanban" }), h("p", { cls: "muted", text: data.reason }));
    const columns = {};
    data.tasks.forEach(function (t) { (columns[t.status] = columns[t.status] || []).push(t); });
    const board = h("div", { cls: "board" }, Object.keys(columns).map(function (status) {
      return h("div", { cls: "column", "data-status": status }, h("h3", { text: status + " (" + columns[status].length + ")" }),
        columns[status].map(function (t) {
          return h("div", { cls: "card task", "data-task": t.id }, h("strong", { text: t.title }),
            h("p", { cls: "small", text: t.body || "" }), h("div", { cls: "muted", text: (t.assignee || "unassigned") + " · " + (t.updated_at || t.created_at || "") }));
        }));
    }));
    return h("section", null, h("h2", { text: "Kanban" }), data.tasks.length ? board : h("p", { cls: "muted", text: "The board is empty." }));
  }

  // -- plugins' tabs ---------------------------------------------------------------------------
  const loaded = {};
  function loadScript(src) {
    if (!loaded[src]) {
      loaded[src] = new Promise(function (resolve, reject) {
        const tag = document.createElement("script");
        tag.src = src; tag.onload = resolve; tag.onerror = function () { reject(new Error("its script " + src + " failed to load")); };
        document.head.append(tag);
      });
    }
    return loaded[src];
  }

  function tabPage(tab) {
    if (tab.error && !tab.entry) return h("section", null, h("h2", { text: tab.label }), h("p", { cls: "error", role: "alert", text: tab.error }));
    if (tab.css && !document.querySelector('link[href="' + tab.css + '"]')) document.head.append(h("link", { rel: "stylesheet", href: tab.css }));
    const area = h("div", { cls: "plugin-tab", "data-tab": tab.name });
    const section = h("section", null, tab.error ? h("p", { cls: "error", role: "alert", text: tab.error }) : null, area);
    section.afterShow = async function () {
      await loadScript(tab.entry);
      if (!area.isConnected) return;
      const Component = window.__HERMES_PLUGINS__.get(tab.name);
      if (!Component) { area.append(h("p", { cls: "error", role: "alert", text: "plugin " + tab.plugin + "'s script registered no page named " + tab.name })); return; }
      mounted = SDK.mount(area, Component, {});
    };
    return section;
  }

  // -- routing ---------------------------------------------------------------------------------
  const pages = [
    { path: "/", label: "Plugins", run: pluginsPage },
    { path: "/hooks", label: "Hooks", run: hooksPage, refresh: 3000 },
    { path: "/tools", label: "Tools", run: toolsPage },
    { path: "/memory", label: "Memory", run: function () { return memoryPage(""); } },
    { path: "/doctor", label: "Doctor", run: doctorPage },
    { path: "/kanban", label: "Kanban", run: kanbanPage },
  ];

  function allPages() {
    const list = pages.slice();
    tabs.forEach(function (tab) {
      const entry = { path: tab.path, label: tab.label, run: function () { return Promise.resolve(tabPage(tab)); }, tab: tab };
      const m = /^(after|before):(.+)$/.exec(tab.position || "");
      const at = m ? list.findIndex(function (p) { return p.label.toLowerCase() === m[2].toLowerCase() || p.path === "/" + m[2]; }) : -1;
      if (at >= 0) list.splice(m[1] === "after" ? at + 1 : at, 0, entry); else list.push(entry);
    });
    return list;
  }

  function drawNav(current) {
    nav.replaceChildren.apply(nav, allPages().map(function (page) {
      return h("a", { href: page.path, cls: page.path === current.path ? "active" : null, "data-page": page.label,
        onclick: function (e) { e.preventDefault(); history.pushState(null, "", page.path); render(); } }, page.label);
    }));
  }

  let generation = 0;

  async function render() {
    const mine = ++generation;
    if (timer) { clearInterval(timer); timer = null; }
    if (mounted) { mounted.unmount(); mounted = null; }
    const list = allPages();
    const page = list.find(function (p) { return p.path === location.pathname; }) || list[0];
    drawNav(page);
    function draw(content) {
      if (mine !== generation) return; // another page was asked for meanwhile
      show(content);
      if (content.afterShow) content.afterShow().catch(failure);
    }
    try { draw(await page.run()); } catch (err) { if (mine === generation) failure(err); }
    if (page.refresh && mine === generation) {
      timer = setInterval(function () {
        if (document.activeElement === document.body) page.run().then(draw, failure);
      }, page.refresh);
    }
  }

  window.addEventListener("popstate", render);
  (async function start() {
    try {
      tabs = await api("/api/dashboard/tabs");
      const me = await api("/auth/me");
      if (me.user) {
        document.getElementById("who").append(me.user + " ", h("button", { cls: "button button-outline", id: "logout", onclick: async function () {
          await post("/auth/logout"); location.href = "/login";
        } }, "Log out"));
      }
    } catch (err) { failure(err); return; }
    render();
  })();
})();
