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

// Select all and the live count of selected candidates (the review form). Without this file the header box still
// works: checked, it sends `selectAll=page` and the server enrolls every open candidate drawn on the page; with it,
// the box ticks the rows and the ticked rows are sent.
(function () {
  'use strict';
  function boxes() {
    return Array.prototype.slice.call(document.querySelectorAll('#review-form input[name="candidateIds"]'));
  }
  function update() {
    var all = document.querySelector('#review-form input[data-select-all]');
    // With this file the ticked rows are the selection: the box only ticks them, it no longer posts `selectAll`
    // (whose page list would also name rows decided in place since the page was drawn).
    if (all) all.removeAttribute('name');
    var list = boxes();
    var n = list.filter(function (b) {
      return b.checked;
    }).length;
    if (all) {
      all.checked = list.length > 0 && n === list.length;
      all.indeterminate = n > 0 && n < list.length;
    }
    var count = document.querySelector('#review-form [data-selected-count]');
    if (count) {
      count.hidden = false;
      count.textContent = ' (' + n + ')';
    }
    var status = document.getElementById('review-selection');
    if (status) status.textContent = n + ' of ' + list.length + ' selected';
  }
  document.addEventListener('change', function (event) {
    var target = event.target;
    if (!target || !target.closest || !target.closest('#review-form')) return;
    if (target.hasAttribute('data-select-all')) {
      boxes().forEach(function (b) {
        b.checked = target.checked;
      });
    }
    update();
  });
  // The form is redrawn after "Enroll selected" (htmx) and rows after a decision: count again.
  document.body.addEventListener('htmx:afterSettle', update);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', update);
  else update();
})();
