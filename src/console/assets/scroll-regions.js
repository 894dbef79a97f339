// Every console page: a table wider than the screen scrolls inside itself (console.css). A keyboard user must be
// able to reach and scroll it, so a table that overflows gets tabindex="0" (named by its caption); one that fits
// gets none, so it adds no useless tab stop. Checked on load, on resize and after htmx swaps.
(function () {
  function mark() {
    document.querySelectorAll('main table:not(.u-legend)').forEach(function (table) {
      const overflows = table.scrollWidth > table.clientWidth;
      if (overflows && !table.hasAttribute('tabindex')) {
        table.setAttribute('tabindex', '0');
        table.setAttribute('data-scroll-region', '');
      } else if (!overflows && table.hasAttribute('data-scroll-region')) {
        table.removeAttribute('tabindex');
        table.removeAttribute('data-scroll-region');
      }
    });
  }
  let pending = 0;
  function later() {
    clearTimeout(pending);
    pending = setTimeout(mark, 100);
  }
  mark();
  window.addEventListener('resize', later);
  document.addEventListener('htmx:afterSettle', later);
  document.addEventListener('toggle', later, true); // a <details> opened: its table is measured now
})();
