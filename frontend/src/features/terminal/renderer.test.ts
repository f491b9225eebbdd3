import { describe, expect, it } from 'vitest';
import { chooseRenderer, isSoftwareGL, MAX_WEBGL_TERMINALS, WebglBudget } from './renderer';

describe('chooseRenderer', () => {
  it.each([
    [{ webgl2: true, inUse: 0, failedBefore: false }, 'webgl'],
    [{ webgl2: true, inUse: MAX_WEBGL_TERMINALS - 1, failedBefore: false }, 'webgl'],
    [{ webgl2: true, inUse: MAX_WEBGL_TERMINALS, failedBefore: false }, 'dom'],
    [{ webgl2: true, inUse: 40, failedBefore: false }, 'dom'],
    [{ webgl2: false, inUse: 0, failedBefore: false }, 'dom'],
    [{ webgl2: true, inUse: 0, failedBefore: true }, 'dom'],
    [{ webgl2: true, inUse: 2, failedBefore: false, limit: 2 }, 'dom'],
  ] as const)('%o → %s', (facts, want) => {
    expect(chooseRenderer(facts)).toBe(want);
  });

  it('keeps well under the ~16 contexts a browser allows', () => {
    expect(MAX_WEBGL_TERMINALS).toBeLessThanOrEqual(12);
  });
});

describe('WebglBudget', () => {
  it('hands out WebGL up to the limit, then the DOM renderer, and WebGL again after a release', () => {
    const budget = new WebglBudget(() => true, 3);
    expect([budget.acquire(), budget.acquire(), budget.acquire(), budget.acquire()]).toEqual(['webgl', 'webgl', 'webgl', 'dom']);
    expect(budget.count).toBe(3);
    budget.release();
    expect(budget.acquire()).toBe('webgl');
  });

  it('uses the DOM renderer for good once WebGL failed to start', () => {
    const budget = new WebglBudget(() => true, 3);
    expect(budget.acquire()).toBe('webgl');
    budget.fail();
    expect(budget.count).toBe(0);
    expect(budget.acquire()).toBe('dom');
  });

  it('never tries WebGL where the page has no WebGL2', () => {
    const budget = new WebglBudget(() => false);
    expect(budget.acquire()).toBe('dom');
    expect(budget.count).toBe(0);
  });

  it('does not count below zero', () => {
    const budget = new WebglBudget(() => true, 1);
    budget.release();
    expect(budget.acquire()).toBe('webgl');
    expect(budget.acquire()).toBe('dom');
  });
});

describe('isSoftwareGL', () => {
  it.each([
    ['llvmpipe (LLVM 15.0.6, 256 bits)', true],
    ['ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)', true],
    ['Mesa softpipe', true],
    ['ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)', false],
    ['Mesa Intel(R) UHD Graphics 620 (KBL GT2)', false],
    ['AMD Radeon Pro 5500M OpenGL Engine', false],
  ])('%s is software: %s', (renderer, software) => {
    expect(isSoftwareGL(renderer)).toBe(software);
  });
});
