// Passkeys (docs/roles.md "Passkeys"): the browser's WebAuthn ceremony between two JSON posts to the console. Buttons
// carry data-passkey="register" or "sign-in" and data-status, the id of the element that says how it went.
/* global PublicKeyCredential */
(function () {
  function csrf() {
    try {
      return JSON.parse(document.body.getAttribute('hx-headers') || '{}')['x-csrf-token'] || '';
    } catch (e) {
      return '';
    }
  }
  async function post(url, body) {
    const res = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf() },
      body: JSON.stringify(body || {}),
    });
    const data = await res.json().catch(function () {
      return {};
    });
    if (!res.ok) throw new Error(data.message || 'The passkey was not accepted.');
    return data;
  }
  function say(button, text) {
    const out = document.getElementById(button.dataset.status);
    if (out) out.textContent = text;
  }
  document.addEventListener('click', async function (event) {
    const button = event.target.closest('[data-passkey]');
    if (!button) return;
    event.preventDefault();
    if (!window.PublicKeyCredential || !PublicKeyCredential.parseCreationOptionsFromJSON) {
      say(button, 'This browser cannot use passkeys here.');
      return;
    }
    button.disabled = true;
    try {
      if (button.dataset.passkey === 'register') {
        const start = await post('/console/passkeys/register/options');
        const created = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(start.options) });
        await post('/console/passkeys/register', { response: created.toJSON() });
        say(button, 'Passkey registered. Next time, sign in with it.');
      } else {
        const start = await post('/console/passkeys/sign-in/options');
        const got = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(start.options) });
        const done = await post('/console/passkeys/sign-in', { response: got.toJSON() });
        window.location.assign(done.next || '/console');
      }
    } catch (err) {
      say(button, err && err.name === 'NotAllowedError' ? 'Cancelled: no passkey was used.' : (err && err.message) || 'The passkey was not accepted.');
    } finally {
      button.disabled = false;
    }
  });
})();
