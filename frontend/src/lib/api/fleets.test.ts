import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { fleetErrorPlace, HttpFleets, WailsFleets, type WailsFleetMethods } from './fleets';

describe('backend.fleets', () => {
  it('web: sends the Composer’s YAML with the run options, and the bulk action as the API names it', async () => {
    const json = vi.fn(async (_method: string, path: string) => {
      if (path.endsWith('/bulk')) return { outcomes: [{ taskId: 'a', ok: true }], fleet: { id: 'fleet-1', tasks: [{ id: 'a', status: 'aborted' }] } };
      if (path.endsWith('/yaml')) return { name: 'pair', yaml: 'name: pair\n' };
      return { id: 'fleet-1', name: 'pair', status: 'running', tasks: null };
    });
    const api = new HttpFleets(json as never);
    const f = await api.create('name: pair\n', { policy: { risk: 'read_only', sandboxDir: '/s' } });
    expect(json).toHaveBeenLastCalledWith('POST', '/api/fleets', { yaml: 'name: pair\n', policy: { risk: 'read_only', sandboxDir: '/s' } });
    expect(f.tasks).toEqual([]);
    const res = await api.bulk('fleet-1', ['a'], 'steer', 'go');
    expect(json).toHaveBeenLastCalledWith('POST', '/api/fleets/fleet-1/tasks/bulk', { task_ids: ['a'], action: 'steer', text: 'go' });
    expect(res.fleet.tasks[0].status).toBe('aborted');
    expect(await api.exportYaml('fleet-1')).toBe('name: pair\n');
  });

  it('desktop: turns Wails’ string rejections into errors that name the task and field', async () => {
    const app = { ParseFleet: () => Promise.reject('task "b": depends_on: no task has id "x"') } as unknown as WailsFleetMethods;
    const err = await new WailsFleets(app).parse('…').catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(fleetErrorPlace(err)).toMatchObject({ task: 'b', field: 'depends_on' });
  });
});
