// Keyboard review on /review/plays/{id}: j/k move between candidates, g good fit, n not a good fit.
// A served file, not an inline script: the console's CSP allows scripts from this server only.
(function () {
  'use strict';
  var index = -1;
  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll('tr[data-candidate]'));
  }
  function select(next) {
    var list = rows();
    if (list.length === 0) return;
    index = Math.max(0, Math.min(list.length - 1, next));
    list.forEach(function (row, i) {
      row.classList.toggle('current', i === index);
      if (i === index) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    });
    list[index].focus();
  }
  function press(action) {
    var row = rows()[index];
    if (!row) return;
    var button = row.querySelector('button[data-action="' + action + '"]');
    if (button) button.click();
  }
  document.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || target.isContentEditable)) return;
    if (event.key === 'j') select(index + 1);
    else if (event.key === 'k') select(index < 0 ? 0 : index - 1);
    else if (event.key === 'g') press('good-fit');
    else if (event.key === 'n') press('not-a-good-fit');
    else return;
    event.preventDefault();
  });
  // A decided row is swapped in place; keep the cursor on it.
  document.body.addEventListener('htmx:afterSwap', function () {
    if (index >= 0) select(index);
  });
})();
