// Bundles the notebook widgets' front ends (src/notebook/*Widget.ts) into single-file ES modules
// that anywidget loads from the Python package: ../nbflow/notebook/widgets/dist/. They reuse the
// Board's views and models, so the panel and the inline widgets draw the same way. The graph
// layout worker is bundled first and inlined as a string: anywidget imports a module from a
// blob: URL, where no sibling worker file can be found. Nothing is fetched at run time.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, '..', 'nbflow', 'notebook', 'widgets', 'dist');
const production = process.argv.includes('--production');

const worker = await build({
  entryPoints: [join(root, 'src', 'layout.worker.ts')],
  bundle: true,
  format: 'iife',
  minify: true,
  write: false,
  target: 'es2020',
  logLevel: 'warning'
});

mkdirSync(outdir, { recursive: true });
await build({
  entryPoints: {
    graph: join(root, 'src', 'notebook', 'graphWidget.ts'),
    scalars: join(root, 'src', 'notebook', 'scalarsWidget.ts'),
    histograms: join(root, 'src', 'notebook', 'histogramsWidget.ts'),
    timeline: join(root, 'src', 'notebook', 'timelineWidget.ts'),
    images: join(root, 'src', 'notebook', 'imagesWidget.ts')
  },
  outdir,
  bundle: true,
  format: 'esm',
  minify: production,
  sourcemap: production ? false : 'inline',
  target: 'es2020',
  define: { NBFLOW_LAYOUT_WORKER: JSON.stringify(worker.outputFiles[0].text) },
  logLevel: 'warning'
});
copyFileSync(join(root, 'style', 'base.css'), join(outdir, 'board.css'));
console.log(`notebook widgets bundled into ${outdir}`);
