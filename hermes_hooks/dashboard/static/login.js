/* The login page: a form per password provider, a button per OAuth provider. */
(function () {
  "use strict";
  const area = document.getElementById("providers");
  const said = document.getElementById("login-error");

  function csrf() {
    const found = document.cookie.split("; ").find(function (c) { return c.indexOf("hermes_csrf=") === 0; });
    return found ? decodeURIComponent(found.slice("hermes_csrf=".length)) : "";
  }

  function field(label, input) {
    const wrap = document.createElement("label");
    wrap.append(label, input);
    return wrap;
  }

  function passwordForm(provider) {
    const form = document.createElement("form");
    form.className = "card login-form";
    form.dataset.provider = provider.name;
    const title = document.createElement("h3");
    title.textContent = provider.display_name;
    const user = document.createElement("input");
    user.name = "username"; user.autocomplete = "username"; user.required = true;
    const pass = document.createElement("input");
    pass.name = "password"; pass.type = "password"; pass.autocomplete = "current-password"; pass.required = true;
    const button = document.createElement("button");
    button.type = "submit"; button.className = "button"; button.textContent = "Log in";
    form.append(title, field("Username", user), field("Password", pass), button);
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      said.textContent = "";
      const next = new URLSearchParams(location.search).get("next") || "/";
      const response = await fetch("/auth/password-login", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Hermes-CSRF": csrf() },
        body: JSON.stringify({ provider: provider.name, username: user.value, password: pass.value, next: next }),
      });
      const body = await response.json().catch(function () { return {}; });
      if (response.ok) { location.href = body.next || "/"; return; }
      pass.value = "";
      said.textContent = response.status === 401 ? "Invalid username or password." : (body.detail || "Login failed.");
    });
    return form;
  }

  function oauthButton(provider) {
    const link = document.createElement("a");
    link.className = "button";
    link.href = "/auth/login?provider=" + encodeURIComponent(provider.name);
    link.textContent = "Log in with " + provider.display_name;
    link.dataset.provider = provider.name;
    return link;
  }

  fetch("/auth/providers", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
    area.replaceChildren.apply(area, data.providers.map(function (p) { return p.password ? passwordForm(p) : oauthButton(p); }));
    if (!data.providers.length) area.textContent = "No login provider is registered.";
  }).catch(function (err) { said.textContent = String(err); });
})();
