// The lead import page: a chosen CSV file is read in the browser and put into the "CSV text" field the form sends
// (the console takes form posts, not uploads), and the import shows a progress bar while it runs.
// No inline handlers: the CSP allows scripts from this origin only.
(function () {
  const file = document.querySelector('[data-csv-file]');
  const text = document.querySelector('[data-csv-text]');
  if (file instanceof HTMLInputElement && text && 'value' in text) {
    file.addEventListener('change', function () {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      const reader = new window.FileReader();
      reader.addEventListener('load', function () {
        text.value = typeof reader.result === 'string' ? reader.result : '';
      });
      reader.readAsText(chosen);
    });
  }
  const form = document.querySelector('[data-import-form]');
  const progress = document.querySelector('[data-import-progress]');
  if (form instanceof HTMLFormElement && progress) {
    form.addEventListener('submit', function (event) {
      const submitter = event.submitter;
      if (submitter && submitter.hasAttribute('data-import-run')) progress.hidden = false;
    });
  }
})();
