// The dashboard's funnel chart: uPlot bars drawn from the page's data-funnel attribute (no inline script: strict CSP).
(function () {
  const target = document.getElementById('funnel-chart');
  if (!target || typeof uPlot === 'undefined') return;
  const funnel = JSON.parse(target.dataset.funnel || '{}');
  const labels = funnel.labels || [];
  const xs = labels.map((_, i) => i);
  const width = Math.max(320, Math.min(target.clientWidth || 720, 900));
  const bars = uPlot.paths.bars({ size: [0.6, 80] });
  new uPlot(
    {
      width,
      height: 260,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{ values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? labels[i] || '' : '')), splits: () => xs }, {}],
      series: [{}, { label: 'Leads', fill: '#3b6fd4', stroke: '#2a55a8', paths: bars, points: { show: false } }],
    },
    [xs, funnel.values || []],
    target,
  );
})();
