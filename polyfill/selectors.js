// ---- :tool-form-active and :tool-submit-active in selector APIs ---------

// Polyfill only. During an agent's call Chromium matches the declarative
// form with :tool-form-active and its submit button with
// :tool-submit-active. A script cannot add a pseudo-class to CSS, so the
// polyfill marks the same elements with the attributes data-tool-form-active
// and data-tool-submit-active (forms.js). Most checks of the state a page
// makes from script, though, go through the selector APIs: matches(),
// closest(), querySelector() and querySelectorAll(). Those are wrapped here
// so that a selector naming a pseudo-class is read as the attribute, and
// `form.matches(':tool-form-active')` answers as it does natively instead of
// throwing a SyntaxError (which, in the WPT file
// declarative/unregister-during-executeTool, left the test's own call
// promise unhandled). Any other selector reaches the browser's method as
// it was given, after one substring test. Stylesheets still need the
// attribute (docs/differences.md).

// The pseudo-classes and the attributes that stand for them.
const ACTIVE_PSEUDOS = [
  [':tool-form-active', '[data-tool-form-active]'],
  [':tool-submit-active', '[data-tool-submit-active]'],
];
const StringIndexOf = uncurry(SP.indexOf);

// isIdentChar says whether c (one character, or undefined past the end)
// may continue a CSS identifier, so that ':tool-form-active-x' is left
// alone.
const isIdentChar = (c) => c !== undefined && (c === '-' || c === '_' || c === '\\' ||
  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c > '\x7f');

// activeSelector rewrites the pseudo-classes of a selector list to their
// attributes. Quoted strings and escaped characters are kept as they are
// (`[title=":tool-form-active"]` still means the title); pseudo-class
// names are ASCII case-insensitive, as in CSS.
function activeSelector(s) {
  if (StringIndexOf(StringToLowerCase(s), ':tool-') < 0) return s;
  let out = '';
  let from = 0;
  let quote = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') { i++; continue; }
    if (quote) { if (c === quote) quote = ''; continue; }
    if (c === '"' || c === "'") { quote = c; continue; }
    if (c !== ':') continue;
    for (let k = 0; k < ACTIVE_PSEUDOS.length; k++) {
      const name = ACTIVE_PSEUDOS[k][0];
      if (StringToLowerCase(StringSlice(s, i, i + name.length)) !== name || isIdentChar(s[i + name.length])) continue;
      out += StringSlice(s, from, i) + ACTIVE_PSEUDOS[k][1];
      i += name.length - 1;
      from = i + 1;
      break;
    }
  }
  return out + StringSlice(s, from);
}

// installActiveSelectors wraps the selector methods of elements, documents
// and fragments, unless the browser knows the pseudo-classes itself. Each
// wrapper keeps the method's name, length and property attributes; a
// selector that is not a string is passed on untouched (the browser
// converts it as before), and so is a call with no argument (the browser
// throws as before).
function installActiveSelectors() {
  try {
    if (G.CSS && G.CSS.supports('selector(:tool-form-active)')) return;
  } catch { /* no CSS.supports: wrap */ }
  const methods = [
    [G.Element.prototype, ['matches', 'webkitMatchesSelector', 'closest', 'querySelector', 'querySelectorAll']],
    [G.Document.prototype, ['querySelector', 'querySelectorAll']],
    [G.DocumentFragment.prototype, ['querySelector', 'querySelectorAll']],
  ];
  for (let m = 0; m < methods.length; m++) {
    const proto = methods[m][0];
    const names = methods[m][1];
    for (let n = 0; n < names.length; n++) {
      const name = names[n];
      const d = getOwnPropertyDescriptor(proto, name);
      if (!d || typeof d.value !== 'function') continue;
      const native = d.value;
      // A method (not a constructor), named as the browser's, of length 1.
      const wrapper = {
        [name](selectors) {
          if (arguments.length === 0) return ReflectApply(native, this, []);
          return ReflectApply(native, this, [typeof selectors === 'string' ? activeSelector(selectors) : selectors]);
        },
      }[name];
      defineProperty(proto, name, {
        value: wrapper, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable,
      });
    }
  }
}
