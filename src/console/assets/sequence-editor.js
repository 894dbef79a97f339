// The sequence editor: a step's kind-specific parts (the e-mail subject, the engage actions) show only for the kinds
// that use them, and an edge's inputs only for the condition that reads them. The server draws them hidden for the
// others and ignores them on save; this file only follows a change of the Kind or If select without a round trip
// (without it, "Show the fields of the chosen kinds" redraws).
(function () {
  'use strict';
  function toggle(container, attribute, value) {
    if (!container) return;
    var parts = container.querySelectorAll('[' + attribute + ']');
    for (var i = 0; i < parts.length; i++) {
      var values = (parts[i].getAttribute(attribute) || '').split(' ');
      parts[i].hidden = values.indexOf(value) < 0;
    }
  }
  document.addEventListener('change', function (event) {
    var target = event.target;
    if (!target || !target.hasAttribute) return;
    if (target.hasAttribute('data-kind-select')) toggle(target.closest('fieldset.step'), 'data-kinds', target.value);
    if (target.hasAttribute('data-cond-select')) toggle(target.closest('fieldset.edge'), 'data-conds', target.value);
  });
})();
