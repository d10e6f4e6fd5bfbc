/**
 * "Send a test event" for a provider or a tracker: a sample event through the normal pipeline, the outcome in a toast.
 */
import { useState } from 'preact/hooks';
import { ApiError, post } from '../../lib/api.ts';
import { t } from '../../lib/i18n.ts';
import type { TestEventOutcome } from '../../lib/types.ts';
import { Button } from '../../ui/basics.tsx';
import { eventLabel } from '../../ui/labels.ts';
import { toast } from '../../ui/toast.tsx';

export function TestEventButton({ path }: { path: string }) {
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    try {
      const r = await post<TestEventOutcome>(path, {});
      const going = r.deliveries.filter((d) => d.status !== 'dropped');
      if (going.length) toast.ok(t('test_event.sent', { count: going.length, type: eventLabel(r.event_type) }));
      else toast.error(new ApiError(422, 'test_event_no_target', '', [], null, { type: eventLabel(r.event_type) }));
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button small icon="send" busy={busy} onClick={send} data-testid="test-event">
      {t('test_event.button')}
    </Button>
  );
}
