import { ImapDeadlineError, withDeadline } from './deadline';

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('settles as the work when it settles first, and never expires afterwards', async () => {
    const onExpire = jest.fn();
    await expect(withDeadline(Promise.resolve(7), 1000, 'LIST', onExpire)).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('NO')), 1000, 'LIST', onExpire)).rejects.toThrow('NO');
    jest.advanceTimersByTime(5000);
    expect(onExpire).not.toHaveBeenCalled();
  });

  it('rejects with ImapDeadlineError and runs onExpire (closing the connection) when the work never ends', async () => {
    const onExpire = jest.fn();
    const never = new Promise<never>(() => {});
    const result = withDeadline(never, 1000, 'FETCH', onExpire);
    jest.advanceTimersByTime(999);
    expect(onExpire).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    await expect(result).rejects.toEqual(new ImapDeadlineError('FETCH', 1000));
    await expect(result).rejects.toThrow('FETCH got no answer within 1000 ms');
    expect(onExpire).toHaveBeenCalledTimes(1);
  });

  it('a rejection of the work after the deadline is not left unhandled', async () => {
    let fail: (e: Error) => void = () => {};
    const late = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const result = withDeadline(late, 10, 'LOGOUT', () => fail(new Error('connection closed')));
    jest.advanceTimersByTime(10);
    await expect(result).rejects.toBeInstanceOf(ImapDeadlineError);
  });
});
