// Keyboard work on /console/tasks, like the review page: j/k move between tasks, Enter or d the task's main button
// (Done, or the X task's Send DM / Follow / Like), s skip, o open profile, c copy message (ignored while typing).
// Copy message needs this file: without JavaScript its button stays hidden and the message is plain selectable text.
// A served file, not an inline script: the console's CSP allows scripts from this server only.
(function () {
  'use strict';
  var index = -1;
  function cards() {
    // A closed card (its outcome, swapped in place) is passed over: the cursor goes on to the next open task.
    return Array.prototype.slice.call(document.querySelectorAll('article[data-task]:not([data-closed])'));
  }
  function select(next) {
    var list = cards();
    if (list.length === 0) return;
    index = Math.max(0, Math.min(list.length - 1, next));
    list.forEach(function (card, i) {
      card.classList.toggle('current', i === index);
      if (i === index) card.setAttribute('aria-current', 'true');
      else card.removeAttribute('aria-current');
    });
    list[index].focus();
  }
  function current() {
    return cards()[index] || null;
  }
  function copy(button) {
    var source = document.getElementById(button.getAttribute('data-copy'));
    var status = button.parentNode.querySelector('[data-copied]');
    if (!source) return;
    var text = source.textContent;
    function said(words) {
      if (status) status.textContent = words;
    }
    function bySelection() {
      // Older browsers, or no clipboard permission: select the text and copy the selection.
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      var ok;
      try {
        ok = document.execCommand('copy');
      } catch (e) {
        ok = false;
      }
      said(ok ? 'Copied' : 'Selected: press Ctrl+C (or ⌘C) to copy');
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () {
        said('Copied');
      }, bySelection);
    } else bySelection();
  }
  function enableCopyButtons(root) {
    Array.prototype.forEach.call(root.querySelectorAll('button[data-action="copy"]'), function (button) {
      button.hidden = false;
    });
  }
  function press(action) {
    var card = current();
    if (!card) return;
    var control = card.querySelector('[data-action="' + action + '"]');
    if (control) control.click();
  }
  document.addEventListener('click', function (event) {
    var button = event.target instanceof Element ? event.target.closest('button[data-action="copy"]') : null;
    if (button) copy(button);
  });
  document.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (target && target.isContentEditable)) return;
    // Enter on a focused button or link is that control's own; Enter on a task card is the card's main button.
    if (event.key === 'Enter' && (tag === 'BUTTON' || tag === 'A')) return;
    if (event.key === 'j') select(index + 1);
    else if (event.key === 'k') select(index < 0 ? 0 : index - 1);
    else if (event.key === 'Enter' || event.key === 'd') press('done');
    else if (event.key === 's') press('skip');
    else if (event.key === 'o') press('open');
    else if (event.key === 'c') press('copy');
    else return;
    event.preventDefault();
  });
  document.addEventListener('DOMContentLoaded', function () {
    enableCopyButtons(document);
  });
  // A card redrawn in place (an outcome, or a refusal with the task still open): keep the cursor on it.
  document.body.addEventListener('htmx:afterSwap', function () {
    enableCopyButtons(document);
    if (index >= 0) select(index);
  });
})();
