// First, so its mark is the moment the bundle began to run.
import { markStartup } from './lib/startup/marks';
import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { pickBackend } from './lib/api';
import { reportUncaughtErrors } from './lib/startup/problems';

markStartup('script');

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element to mount ClusterSpace into');

const backend = pickBackend();
reportUncaughtErrors(window, backend);
mount(App, { target, props: { backend } });
