// First, so its mark is the moment the bundle began to run.
import { markStartup } from './lib/startup/marks';
import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { pickBackend } from './lib/api';

markStartup('script');

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element to mount ClusterSpace into');

mount(App, { target, props: { backend: pickBackend() } });
