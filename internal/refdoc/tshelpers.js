// Prints the public API of the npm package @mediamock/server as JSON, read
// from its TypeScript sources (process.argv[2]: the package's folder) with
// the TypeScript compiler's parser, syntax only (nothing is compiled or
// generated): every name src/index.ts exports, with its declaration as
// written (a body left out) and its doc comment. refdoc.TypeScriptHelpers
// runs it (node -e) and writes docs/reference/typescript-helpers.md.
const path = require("node:path");
const fs = require("node:fs");
const pkg = path.resolve(process.argv[1]);
const ts = require(path.join(pkg, "node_modules", "typescript"));

const files = {};
function source(rel) {
  const file = path.join(pkg, "src", rel.replace(/^\.\//, "") + ".ts");
  if (!files[file]) files[file] = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  return files[file];
}
const oneLine = (s) => s.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/[^\n]*/g, "").replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")").replace(/,\)/g, ")").trim();
function doc(node) {
  const parts = (node.jsDoc || []).map((d) => (typeof d.comment === "string" ? d.comment : ts.getTextOfJSDocComment(d.comment) || ""));
  const text = parts.join("\n\n").trim().split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim(); // the first paragraph
  const m = text.match(/^(.*?[.!?])(\s|$)/);
  return m ? m[1] : text;
}
// text: a node's source, its body (a block) left out.
function text(node, sf) {
  let end = node.end;
  if (node.body && ts.isBlock(node.body)) end = node.body.pos;
  const start = node.getStart(sf, false);
  return oneLine(sf.text.slice(start, end).replace(/^export\s+(default\s+)?/, "").replace(/^(declare\s+)/, ""));
}
function members(node, sf) {
  const out = [];
  for (const m of node.members || []) {
    const mods = ts.canHaveModifiers(m) ? ts.getModifiers(m) || [] : [];
    if (mods.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword)) continue;
    if (m.name && ts.isPrivateIdentifier(m.name)) continue;
    if (ts.isConstructorDeclaration(m)) {
      out.push({ signature: text(m, sf).replace(/\s*\{\s*$/, ""), doc: doc(m) });
      continue;
    }
    if (ts.isIndexSignatureDeclaration(m)) continue;
    out.push({ signature: text(m, sf).replace(/;$/, ""), doc: doc(m) });
  }
  return out;
}
function describe(file, name, exported, typeOnly) {
  const sf = source(file);
  for (const st of sf.statements) {
    const declName = st.name && st.name.text;
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        if (d.name.text === name) return { kind: "constant", name: exported, signature: oneLine(d.getText(sf).split("=")[0]), doc: doc(st) };
      }
      continue;
    }
    if (declName !== name) continue;
    if (ts.isFunctionDeclaration(st)) return { kind: "function", name: exported, signature: text(st, sf), doc: doc(st) };
    if (ts.isClassDeclaration(st)) {
      const head = text(st, sf).replace(/\{.*$/, "").trim();
      return { kind: "class", name: exported, signature: head, doc: doc(st), members: members(st, sf) };
    }
    if (ts.isInterfaceDeclaration(st)) {
      const head = text(st, sf).replace(/\{.*$/, "").trim();
      return { kind: "interface", name: exported, signature: head, doc: doc(st), members: members(st, sf) };
    }
    if (ts.isTypeAliasDeclaration(st)) {
      // A long computed type shows its head only: the source has the rest.
      let sig = text(st, sf).replace(/;$/, "");
      if (sig.length > 120) sig = oneLine(sf.text.slice(st.getStart(sf, false), st.type.pos)).replace(/^export\s+/, "").replace(/\s*=$/, "");
      return { kind: "type", name: exported, signature: sig, doc: doc(st) };
    }
  }
  // Re-exported from elsewhere (export type { X }; export { X } from "./y").
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const el of st.exportClause.elements) {
        if (el.name.text === name && !st.moduleSpecifier) {
          return { kind: "type", name: exported, signature: `type ${exported}`, doc: "" };
        }
      }
    }
  }
  throw new Error(`tshelpers: ${name} is not declared at the top of ${file}.ts`);
}

const index = source("index");
const items = [];
for (const st of index.statements) {
  if (!ts.isExportDeclaration(st) || !st.moduleSpecifier || !st.exportClause) continue;
  const from = st.moduleSpecifier.text;
  for (const el of st.exportClause.elements) {
    const orig = (el.propertyName || el.name).text;
    items.push(describe(from, orig, el.name.text, st.isTypeOnly || el.isTypeOnly));
  }
}
const order = { function: 0, constant: 1, class: 2, interface: 3, type: 4 };
items.sort((a, b) => order[a.kind] - order[b.kind] || a.name.localeCompare(b.name));
process.stdout.write(JSON.stringify(items, null, 1));
