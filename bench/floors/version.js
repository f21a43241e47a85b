// The floor of `nodereg --version`: the CLI's one argument parser alone, printing a version.
import { Command } from 'commander';

new Command('nodereg').version('0.0.0', '-V, --version', 'print the version').parse();
