// The sequence editor: a step's kind-specific parts (the e-mail subject, the engage actions) show only for the kinds
// that use them. The server draws them hidden for the other kinds and ignores them on save; this file only follows
// a change of the Kind select without a round trip (without it, "Show the fields of the chosen kinds" redraws).
(function () {
  'use strict';
  function sync(select) {
    var step = select.closest('fieldset.step');
    if (!step) return;
    var parts = step.querySelectorAll('[data-kinds]');
    for (var i = 0; i < parts.length; i++) {
      var kinds = (parts[i].getAttribute('data-kinds') || '').split(' ');
      parts[i].hidden = kinds.indexOf(select.value) < 0;
    }
  }
  document.addEventListener('change', function (event) {
    var target = event.target;
    if (target && target.hasAttribute && target.hasAttribute('data-kind-select')) sync(target);
  });
})();
