// Every console page: forms marked data-confirm ask before they are sent (Delete, Disconnect, Opt out…).
// No inline handlers: the CSP allows scripts from this origin only.
(function () {
  document.addEventListener(
    'submit',
    function (event) {
      const form = event.target;
      if (!(form instanceof HTMLFormElement)) return;
      const question = form.getAttribute('data-confirm');
      if (question && !window.confirm(question)) event.preventDefault();
    },
    true,
  );
})();
