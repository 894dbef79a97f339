// The lead import page: a chosen CSV file is read in the browser, its bytes (base64) into a hidden field the form
// sends and its text into the "CSV text" field to look at (the console takes form posts, not uploads), and the import shows a progress bar while it runs.
// No inline handlers: the CSP allows scripts from this origin only.
(function () {
  /** The bytes as base64 (in chunks: String.fromCharCode takes a bounded number of arguments). */
  function base64Of(bytes) {
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return window.btoa(binary);
  }
  /**
   * The file's text for a look, read the way the service reads its bytes (docs/sequences-and-leads.md "Encoding"): a
   * BOM decides, UTF-16 without one is told by its zero bytes, valid UTF-8 is UTF-8, anything else is shown as
   * Windows-1252 (Excel's default CSV), never as UTF-8 with U+FFFD in place of the letters it could not read. The
   * preview says which encoding the service used.
   */
  function textOf(bytes) {
    const decode = function (label, fatal) {
      return new window.TextDecoder(label, { fatal: fatal === true }).decode(bytes);
    };
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return decode('utf-16le');
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return decode('utf-16be');
    const sample = Math.min(bytes.length, 4096);
    let even = 0;
    let odd = 0;
    for (let i = 0; i < sample; i++) {
      if (bytes[i] === 0 && i % 2 === 0) even++;
      else if (bytes[i] === 0) odd++;
    }
    if (odd > sample / 5 && odd > even) return decode('utf-16le');
    if (even > sample / 5 && even > odd) return decode('utf-16be');
    try {
      return decode('utf-8', true);
    } catch (notUtf8) {
      return decode('windows-1252');
    }
  }
  const file = document.querySelector('[data-csv-file]');
  const text = document.querySelector('[data-csv-text]');
  const bytes = document.querySelector('[data-csv-bytes]');
  if (file instanceof HTMLInputElement && text && 'value' in text) {
    file.addEventListener('change', function () {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      // The file's bytes go as they are (base64): the server tells their encoding (Windows-1252, UTF-16…) and
      // delimiter. The text field shows the file for a look; editing it sends the text instead. Both are filled at
      // once, from one reading, so a Preview never sends the text without the bytes.
      const reader = new window.FileReader();
      reader.addEventListener('load', function () {
        if (!(reader.result instanceof ArrayBuffer)) return;
        const read = new Uint8Array(reader.result);
        if (bytes instanceof HTMLInputElement) bytes.value = base64Of(read);
        text.value = textOf(read);
      });
      reader.readAsArrayBuffer(chosen);
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
