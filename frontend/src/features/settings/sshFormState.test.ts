import { describe, expect, it } from 'vitest';
import { draftFromServer, emptySSHDraft, passwordChange, sshChanged, sshTarget, toSSHInput } from './sshFormState';
import { savedServer } from './testFixtures';

const saved = savedServer({ keyPath: '/k' });

describe('passwordChange', () => {
  it('omits the password unless one was typed or removal asked for', () => {
    expect(passwordChange({ value: '', remove: false })).toEqual({});
    expect(passwordChange({ value: '   ', remove: false })).toEqual({});
    expect('password' in passwordChange({ value: '', remove: false })).toBe(false);
    expect(passwordChange({ value: '', remove: true })).toEqual({ password: '' });
    expect(passwordChange({ value: 'typed but removed', remove: true })).toEqual({ password: '' });
    expect(passwordChange({ value: ' s3cret ', remove: false })).toEqual({ password: ' s3cret ' });
  });
});

describe('toSSHInput', () => {
  it('trims the fields and reads the port, empty meaning ssh’s default', () => {
    const r = toSSHInput({ name: ' box ', host: ' h ', port: '', user: ' u ', keyPath: ' /k ' }, { value: '', remove: false });
    expect(r).toEqual({ ok: true, input: { name: 'box', host: 'h', port: 0, user: 'u', keyPath: '/k' } });
    expect(toSSHInput({ ...emptySSHDraft(), port: ' 2222 ' }, { value: 'pw', remove: false })).toMatchObject({ ok: true, input: { port: 2222, password: 'pw' } });
  });

  it('names the port when it is not a number; ranges are the backend’s to check', () => {
    const r = toSSHInput({ ...emptySSHDraft(), port: '22a' }, { value: '', remove: false });
    expect(r).toMatchObject({ ok: false, field: 'port' });
    expect(toSSHInput({ ...emptySSHDraft(), port: '70000' }, { value: '', remove: false })).toMatchObject({ ok: true, input: { port: 70000 } });
  });
});

describe('editing', () => {
  it('shows port 0 as empty, and sees no change in an untouched draft', () => {
    expect(draftFromServer({ ...saved, port: 0 }).port).toBe('');
    const same = toSSHInput(draftFromServer(saved), { value: '', remove: false });
    expect(same.ok && sshChanged(saved, same.input)).toBe(false);
    const pw = toSSHInput(draftFromServer(saved), { value: '', remove: true });
    expect(pw.ok && sshChanged(saved, pw.input)).toBe(true);
  });

  it('writes the target as ssh reads it', () => {
    expect(sshTarget(saved)).toBe('ci@10.0.0.5:2222');
    expect(sshTarget({ host: 'h', port: 0, user: '' })).toBe('h');
  });
});
