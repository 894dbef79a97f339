// The dashboard's charts, drawn with uPlot from the page's data- attributes (no inline script: strict CSP):
// the funnel (data-funnel) as bars, sends/replies/meetings per UTC day (data-daily) and meetings booked/held/missed
// (data-meetings) as lines. Each chart takes its container's width and is drawn again when that width changes, so it
// never widens the page (390px phones included).
(function () {
  if (typeof uPlot === 'undefined') return;

  /** Counts are whole numbers: the y axis never says 0.5. */
  const COUNT_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6];
  const countAxis = { size: 50, incrs: COUNT_INCRS, values: (_u, splits) => splits.map((n) => n.toLocaleString('en-US')) };
  const fromZero = (_u, _min, max) => [0, Math.max(1, max) * 1.1];
  const DAY = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
  /** Under this width the funnel's stage names get too little room each and are drawn slanted. */
  const NARROW = 560;

  /**
   * Calls `draw(width, previous)` now and (debounced) whenever the container's width changes; `draw` returns the
   * chart, resized or made anew. The width is the container's, never less than a small phone's column.
   */
  function responsive(el, draw) {
    let chart = null;
    let drawnWidth = 0;
    const update = () => {
      const width = Math.max(200, Math.floor(el.getBoundingClientRect().width || 0));
      if (width === drawnWidth) return;
      drawnWidth = width;
      chart = draw(width, chart);
    };
    update();
    let pending = 0;
    const later = () => {
      clearTimeout(pending);
      pending = setTimeout(update, 100);
    };
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(later).observe(el);
    window.addEventListener('resize', later);
  }

  const funnelEl = document.getElementById('funnel-chart');
  if (funnelEl) {
    const funnel = JSON.parse(funnelEl.dataset.funnel || '{}');
    const labels = funnel.labels || [];
    const xs = labels.map((_, i) => i);
    const bars = uPlot.paths.bars({ size: [0.6, 80] });
    const HEIGHT = 260;
    const make = (width, narrow) =>
      new uPlot(
        {
          width,
          height: HEIGHT,
          legend: { show: false },
          cursor: { show: false },
          scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: fromZero } },
          axes: [
            {
              values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? labels[i] || '' : '')),
              splits: () => xs,
              rotate: narrow ? 40 : 0,
              size: narrow ? 80 : 40,
            },
            countAxis,
          ],
          series: [{}, { label: 'Leads', fill: '#3b6fd4', stroke: '#2a55a8', paths: bars, points: { show: false } }],
        },
        [xs, funnel.values || []],
        funnelEl,
      );
    // The slant is part of the axes: crossing the narrow width draws the chart anew, any other change resizes it.
    responsive(funnelEl, (width, chart) => {
      const narrow = width < NARROW;
      if (chart && chart.narrow === narrow) {
        chart.setSize({ width, height: HEIGHT });
        return chart;
      }
      if (chart) chart.destroy();
      const made = make(width, narrow);
      made.narrow = narrow;
      return made;
    });
  }

  /** Counts per UTC day as lines: `lines` names each series' key in the data and how it is drawn. */
  function dailyLines(el, data, lines) {
    // uPlot's time axis takes seconds; the days are UTC days, and the axis names them in UTC too.
    const xs = (data.days || []).map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const HEIGHT = 240;
    responsive(el, (width, chart) => {
      if (chart) {
        chart.setSize({ width, height: HEIGHT });
        return chart;
      }
      return new uPlot(
        {
          width,
          height: HEIGHT,
          cursor: { y: false },
          legend: { live: false },
          scales: { x: { time: true }, y: { range: fromZero } },
          axes: [
            { space: 56, incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400], values: (_u, splits) => splits.map((ts) => DAY.format(new Date(ts * 1000))) },
            countAxis,
          ],
          series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.stroke, width: 2, dash: l.dash, points: { size: 4 } }))],
        },
        [xs, ...lines.map((l) => data[l.key] || [])],
        el,
      );
    });
  }

  const dailyEl = document.getElementById('daily-chart');
  if (dailyEl)
    dailyLines(dailyEl, JSON.parse(dailyEl.dataset.daily || '{}'), [
      { key: 'sends', label: 'Sends', stroke: '#2a55a8' },
      { key: 'replies', label: 'Replies', stroke: '#1b7a3a' },
      { key: 'meetings', label: 'Meetings', stroke: '#b35900', dash: [6, 3] },
    ]);

  // Meetings booked, held and missed per UTC day (dashboard-meetings.tsx).
  const meetingsEl = document.getElementById('meetings-chart');
  if (meetingsEl)
    dailyLines(meetingsEl, JSON.parse(meetingsEl.dataset.meetings || '{}'), [
      { key: 'booked', label: 'Booked', stroke: '#b35900' },
      { key: 'held', label: 'Held', stroke: '#1b7a3a' },
      { key: 'noShows', label: 'No-show', stroke: '#b3261e', dash: [6, 3] },
    ]);
})();
