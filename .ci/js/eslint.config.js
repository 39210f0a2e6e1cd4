// ESLint flat config for the JavaScript that webmcp-cdp ships or serves:
// the page script (polyfill/*.js joined into one closure, written by .ci/run
// to .ci/js/build/webmcp.js; the topic files are not scripts on their own)
// and the fixture pages' scripts under fixtures/. All of it is plain browser JavaScript loaded with
// classic <script> tags or Page.addScriptToEvaluateOnNewDocument, not
// modules, so files are linted as scripts with the browser's globals.
//
// Paths are relative to the repository root: .ci/run calls
//   eslint --config .ci/js/eslint.config.js polyfill fixtures
// from there.
import js from "@eslint/js";
import globals from "globals";

export default [
  {
    files: [".ci/js/build/*.js", "fixtures/**/*.js"],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "script",
      globals: { ...globals.browser },
    },
    linterOptions: {
      // A disable comment that no longer hides anything is itself a finding.
      reportUnusedDisableDirectives: "error",
    },
  },
  {
    // The conformance pages are classic scripts that share globals across
    // files: harness.js sets window.conformance, old-polyfill.js sets
    // window.makeOldPolyfill, and the WebMCP API under test (the polyfill
    // or Chromium's native one) defines the event classes.
    files: ["fixtures/conformance/*.js"],
    languageOptions: {
      globals: {
        conformance: "readonly",
        makeOldPolyfill: "readonly",
        ToolActivatedEvent: "readonly",
        ToolCancelEvent: "readonly",
      },
    },
  },
  {
    // The npm launcher (packaging/npm) is a CommonJS script run by Node.
    files: ["packaging/npm/**/*.js"],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: "latest",
      sourceType: "commonjs",
      globals: { ...globals.node },
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error",
    },
  },
];
