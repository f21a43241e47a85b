// The startup benchmark's floors, bundled exactly as `npm run build` bundles the CLI (scripts/bundle-options.js):
// what the one argument parser costs alone, and what `node show` cannot do without. Each ratio of the CLI is
// read against them: a floor above a row's target shows the target out of reach through the one path.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rolldown } from 'rolldown';
import { bundlePackageJson, inputOptions, outputOptions } from '../scripts/bundle-options.js';

/**
 * Bundles each floor on its own into `dir`/NAME (as the CLI's entry holds commander, so does each floor's);
 * resolves to the path of each floor's entry, by name.
 */
export async function buildFloors(dir) {
  const built = {};
  for (const name of ['version', 'node-show']) {
    const bundle = await rolldown({
      cwd: resolve(import.meta.dirname, '..'),
      input: { [name]: `bench/floors/${name}.js` },
      ...inputOptions,
    });
    await bundle.write({ dir: join(dir, name), ...outputOptions });
    await bundle.close();
    writeFileSync(join(dir, name, 'package.json'), bundlePackageJson);
    built[name] = join(dir, name, `${name}.js`);
  }
  return built;
}
