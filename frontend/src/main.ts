import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { pickBackend } from './lib/api';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element to mount ClusterSpace into');

mount(App, { target, props: { backend: pickBackend() } });
