import { describe, expect, it } from 'vitest';
import { BackendError, fleetErrorPlace, type FleetFile } from '../../lib/api';
import { applyRendered, checkDraft, emptyComposer, fieldKey, fromFile, newTask, placeError, removeTask, renameTask, runOptions, toYaml, yamlString } from './composer';

function twoTasks() {
  const d = emptyComposer();
  d.name = 'release';
  d.concurrency = '2';
  const [build] = d.tasks;
  Object.assign(build, { id: 'build', goal: 'Build the project: write dist/', pane: 'shell-1', role: 'Builder', check: 'shell', checkText: 'test -d dist' });
  const test = newTask(d.tasks);
  Object.assign(test, { id: 'test', goal: 'Run the tests', role: 'Tester', dependsOn: ['build'], check: 'question', checkText: 'Did all tests pass?', threshold: 'high_confidence' });
  d.tasks.push(test);
  return d;
}

describe('the Composer', () => {
  it('writes the fleet file `fleet run` reads', () => {
    expect(toYaml(twoTasks())).toBe(
      [
        'name: release',
        'concurrency: 2',
        'tasks:',
        '  - id: build',
        '    goal: "Build the project: write dist/"',
        '    pane: shell-1',
        '    role: Builder',
        '    check_shell: test -d dist',
        '  - id: test',
        '    goal: Run the tests',
        '    role: Tester',
        '    depends_on: [build]',
        '    check_question: "Did all tests pass?"',
        '    threshold: high_confidence',
        '',
      ].join('\n'),
    );
  });

  it('quotes what YAML would read as something else', () => {
    for (const s of ['true', 'no', '42', '', ' lead', 'a: b', 'x #c', '- item', '[x]', '{y}', '*ref', 'it\'s "q"', 'two\nlines'])
      expect(yamlString(s)).toBe(JSON.stringify(s));
    expect(yamlString('test -d dist')).toBe('test -d dist');
  });

  it('reads a parsed file back to the same YAML, keeping the run options', () => {
    const d = twoTasks();
    const file: FleetFile = {
      name: 'release',
      concurrency: 2,
      tasks: [
        { id: 'build', goal: 'Build the project: write dist/', pane: 'shell-1', role: 'Builder', criterion: { kind: 'shell', command: 'test -d dist' } },
        {
          id: 'test',
          goal: 'Run the tests',
          pane: 'test-term', // the default pane: left out again
          role: 'Tester',
          dependsOn: ['build'],
          criterion: { kind: 'model_question', question: 'Did all tests pass?', threshold: 'high_confidence' },
        },
      ],
    };
    const base = emptyComposer();
    base.risk = 'network_get';
    base.sandboxDir = '/tmp/sb';
    const back = fromFile(file, base);
    expect(toYaml(back)).toBe(toYaml(d));
    expect(runOptions(back)).toEqual({ policy: { risk: 'network_get', sandboxDir: '/tmp/sb' } });
  });

  it("writes and reads back a task's pane template, persona, isolation and ssh, and the fleet's isolation and setup", () => {
    const d = twoTasks();
    Object.assign(d.tasks[0], { template: 'claude', persona: 'reviewer', isolation: 'worktree', ssh: 'build-box' });
    const yaml = toYaml(d);
    expect(yaml).toContain('    role: Builder\n    persona: reviewer\n    template: claude\n    isolation: worktree\n    ssh: build-box\n    check_shell');
    expect(yaml.split('template:').length).toBe(2); // the test task's pane stays a shell
    d.isolation = 'worktree';
    d.setup = 'npm ci';
    const yaml2 = toYaml(d);
    expect(yaml2).toContain('concurrency: 2\nisolation: worktree\nsetup: npm ci\ntasks:\n');
    const back = fromFile({
      name: 'release',
      concurrency: 2,
      isolation: 'worktree',
      setup: 'npm ci',
      tasks: [
        {
          id: 'build',
          goal: 'Build the project: write dist/',
          pane: 'shell-1',
          role: 'Builder',
          persona: 'reviewer',
          template: 'claude',
          isolation: 'worktree',
          ssh: 'build-box',
          criterion: { kind: 'shell', command: 'test -d dist' },
        },
        {
          id: 'test',
          goal: 'Run the tests',
          pane: 'test-term',
          role: 'Tester',
          dependsOn: ['build'],
          criterion: { kind: 'model_question', question: 'Did all tests pass?', threshold: 'high_confidence' },
        },
      ],
    });
    expect(toYaml(back)).toBe(yaml2);
  });

  it('fills a task from a rendered task template: goal, a question for the judge, persona', () => {
    const t = newTask();
    Object.assign(t, { check: 'shell', checkText: 'make', threshold: 'yes', persona: 'old' });
    applyRendered(t, { goal: 'Fix the crash', criterion: 'Is the crash gone?', persona: 'reviewer' });
    expect([t.goal, t.check, t.checkText, t.threshold, t.persona]).toEqual(['Fix the crash', 'question', 'Is the crash gone?', '', 'reviewer']);
    applyRendered(t, { goal: 'Other', criterion: 'Done?' });
    expect(t.persona).toBe('reviewer'); // a template without persona keeps the chosen one
  });

  it('recognizes the default judge and every other kind', () => {
    const judge = 'Judging strictly by the evidence, was this task achieved? TASK: Do it';
    const f = fromFile({
      name: 'k',
      concurrency: 0,
      tasks: [
        { id: 'a', goal: 'Do it', pane: 'a-term', criterion: { kind: 'model_question', question: judge, threshold: 'high_confidence' } },
        { id: 'b', goal: 'B', pane: 'b-term', criterion: { kind: 'json_predicate', expr: 'x.ok', source: 'file:out.json', timeout: '30s' } },
        { id: 'c', goal: 'C', pane: 'c-term', criterion: { kind: 'visual', question: 'Is the page green?', paneId: 'web' } },
        { id: 'd', goal: 'D', pane: 'd-term', criterion: { kind: 'manual' } },
        { id: 'e', goal: 'E', pane: 'e-term', criterion: { kind: 'shell', command: 'make', exitCode: 2, timeout: '2m0s' } },
      ],
    });
    expect(f.tasks.map((t) => t.check)).toEqual(['judge', 'json', 'visual', 'manual', 'shell']);
    const y = toYaml(f);
    expect(y).toContain('  - id: a\n    goal: Do it\n  - id: b');
    expect(y).toContain('check_json: x.ok\n    json_source: "file:out.json"\n    check_timeout: "30s"');
    expect(y).toContain('check_visual: "Is the page green?"\n    visual_pane: web');
    expect(y).toContain('check_manual: true');
    expect(y).toContain('check_shell: make\n    exit_code: 2\n    check_timeout: "2m0s"');
  });

  it('renaming a task renames the dependencies on it; removing one drops them', () => {
    const d = twoTasks();
    renameTask(d, d.tasks[0].key, 'compile');
    expect(d.tasks[1].dependsOn).toEqual(['compile']);
    removeTask(d, d.tasks[0].key);
    expect(d.tasks.map((t) => t.id)).toEqual(['test']);
    expect(d.tasks[0].dependsOn).toEqual([]);
  });

  it('names empty, bad and cyclic fields before sending', () => {
    const d = twoTasks();
    d.name = ' ';
    d.concurrency = '30';
    d.tasks[1].goal = '';
    d.tasks[1].checkText = '';
    const t3 = newTask(d.tasks);
    t3.id = 'build';
    t3.goal = 'again';
    d.tasks.push(t3);
    const errs = checkDraft(d);
    expect(errs.name).toMatch(/Name/);
    expect(errs.concurrency).toMatch(/1 to 20/);
    expect(errs[fieldKey(d.tasks[1], 'goal')]).toBeTruthy();
    expect(errs[fieldKey(d.tasks[1], 'check')]).toBeTruthy();
    expect(errs[fieldKey(t3, 'id')]).toMatch(/Another task/);
    const loop = twoTasks();
    loop.tasks[0].dependsOn = ['test'];
    expect(checkDraft(loop)[fieldKey(loop.tasks[1], 'depends_on')]).toMatch(/cycle: build → test → build/);
    expect(checkDraft(twoTasks())).toEqual({});
  });

  it("puts the server's refusal next to the task's field", () => {
    const d = twoTasks();
    const web = new BackendError('task "test": check_question: ask a question the judge answers yes or no', { status: 400, field: 'check_question' });
    expect(placeError(fleetErrorPlace(web), d)).toEqual({ key: fieldKey(d.tasks[1], 'check'), message: web.message });
    // The desktop door sends only the text.
    expect(placeError(fleetErrorPlace('task "build": paneId: no pane "x"'), d).key).toBe(fieldKey(d.tasks[0], 'pane'));
    expect(placeError(fleetErrorPlace('task #2: id: every task needs an id'), d).key).toBe(fieldKey(d.tasks[1], 'id'));
    expect(placeError(fleetErrorPlace('task "build": policy.sandboxDir: "/x" does not exist'), d).key).toBe('sandboxDir');
    expect(placeError(fleetErrorPlace('concurrency: at most 20'), d).key).toBe('concurrency');
    expect(placeError(fleetErrorPlace('the server is down'), d).key).toBe('file');
  });
});
