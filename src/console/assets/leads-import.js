// The lead import page: a chosen CSV file is read in the browser, its bytes (base64) into a hidden field the form
// sends and its text into the "CSV text" field to look at (the console takes form posts, not uploads), and the import shows a progress bar while it runs.
// No inline handlers: the CSP allows scripts from this origin only.
(function () {
  const file = document.querySelector('[data-csv-file]');
  const text = document.querySelector('[data-csv-text]');
  const bytes = document.querySelector('[data-csv-bytes]');
  if (file instanceof HTMLInputElement && text && 'value' in text) {
    file.addEventListener('change', function () {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      // The file's bytes go as they are (base64): the server tells their encoding (Windows-1252, UTF-16…) and
      // delimiter. The text field shows the file as UTF-8 for a look; editing it sends the text instead.
      const asBytes = new window.FileReader();
      asBytes.addEventListener('load', function () {
        const url = typeof asBytes.result === 'string' ? asBytes.result : '';
        if (bytes instanceof HTMLInputElement) bytes.value = url.slice(url.indexOf(',') + 1);
      });
      asBytes.readAsDataURL(chosen);
      const asText = new window.FileReader();
      asText.addEventListener('load', function () {
        text.value = typeof asText.result === 'string' ? asText.result : '';
      });
      asText.readAsText(chosen);
    });
    text.addEventListener('input', function () {
      if (bytes instanceof HTMLInputElement) bytes.value = '';
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
