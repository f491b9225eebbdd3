// The fleets' calls on both transports, over the answers Go really gives (testdata/*.json,
// written by backend/api's TestGoldenFleetAnswers from a running fleet).
import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { fleetErrorPlace } from './fleets';
import { desktop, web, type Answers } from './transports.fixture';
import { WailsBackend, type WailsApp } from './wails';
import getFleet from './testdata/GetFleet.json';
import listFleets from './testdata/ListFleets.json';
import parseFleet from './testdata/ParseFleet.json';
import exportFleet from './testdata/ExportFleet.json';
import fleetBulk from './testdata/FleetBulk.json';

const golden: Answers = { GetFleet: getFleet, ListFleets: listFleets, ParseFleet: parseFleet, ExportFleet: exportFleet, FleetBulk: fleetBulk, CreateFleet: getFleet, AbortFleet: getFleet };

describe('backend.fleets', () => {
  it('sends the Composer’s YAML with the run options and the bulk action as the table names them, alike on both doors', async () => {
    const d = desktop(golden);
    const w = web(golden);
    for (const { api } of [d, w]) {
      await api.fleets.create('name: release\n', { policy: { risk: 'read_only', sandboxDir: '/s' } });
      await api.fleets.parse('name: release\n');
      await api.fleets.bulk('fleet-1', ['build'], 'steer', 'go');
      await api.fleets.abort('fleet-1');
      await api.fleets.exportYaml('fleet-1');
    }
    const sent = [
      ['CreateFleet', { yaml: 'name: release\n', policy: { risk: 'read_only', sandboxDir: '/s' } }],
      ['ParseFleet', { yaml: 'name: release\n' }],
      ['FleetBulk', { id: 'fleet-1', taskIds: ['build'], action: 'steer', text: 'go' }],
      ['AbortFleet', { id: 'fleet-1' }],
      ['ExportFleet', { id: 'fleet-1' }],
    ];
    expect(d.sent()).toEqual(sent);
    expect(w.sent()).toEqual(sent);
  });

  it("reads Go's real answers: the fleets, a task's dependencies and criterion, the outcomes and the file", async () => {
    for (const { api } of [desktop(golden), web(golden)]) {
      const [f] = await api.fleets.list();
      expect(f).toMatchObject({ name: 'release', status: 'running', spec: { concurrency: 1, policy: { risk: 'write_local' } } });
      expect(f.tasks.map((t) => [t.id, t.status, t.dependsOn ?? []])).toEqual([
        ['build', 'running', []],
        ['review', 'waiting', ['build']],
      ]);
      expect(f.tasks[1].criterion).toEqual({ kind: 'model_question', question: 'Is the build reviewed?' });
      expect((await api.fleets.get(f.id)).tasks[0].persona).toBe('engineer');
      const parsed = await api.fleets.parse('…');
      expect(parsed.file.tasks.map((t) => t.id)).toEqual(['build', 'review']);
      expect(parsed.yaml).toContain('depends_on:\n      - build');
      const res = await api.fleets.bulk(f.id, ['build', 'review'], 'pause');
      expect(res.outcomes).toEqual([
        { taskId: 'build', ok: true },
        { taskId: 'review', ok: false, error: 'task review is waiting; only a running task pauses' },
      ]);
      expect(res.fleet.id).toBe(f.id);
      expect(await api.fleets.exportYaml(f.id)).toBe(exportFleet.yaml);
    }
  });

  it('turns a refused fleet file into an error that names the task and field, alike on both doors', async () => {
    const body = { error: 'task "b": depends_on: no task has id "x"', field: 'depends_on', task: 'b' };
    const fromDesktop = await desktop(golden, { status: 400, body }).api.fleets.parse('…').catch((e: unknown) => e);
    const fromWeb = await web(golden, { status: 400, body }).api.fleets.parse('…').catch((e: unknown) => e);
    for (const err of [fromDesktop, fromWeb]) {
      expect(err).toBeInstanceOf(BackendError);
      expect(fleetErrorPlace(err)).toMatchObject({ task: 'b', field: 'depends_on' });
    }
  });

  it('saves a file through the transport’s own way: the desktop’s dialog, the web’s download', async () => {
    const SaveFleetFile = vi.fn(async () => {});
    await new WailsBackend({ SaveFleetFile } as unknown as WailsApp, undefined).fleets.saveFile('release', 'name: release\n');
    expect(SaveFleetFile).toHaveBeenCalledWith('release', 'name: release\n');
  });
});
