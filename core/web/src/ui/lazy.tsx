/** A page whose code loads on first visit, with the strings beyond the first visit's (a small first download). */
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { loadMore } from '../lib/i18n.ts';
import { ErrorNote, Loading } from './basics.tsx';

type Props = { params: Record<string, string> };

export function lazyPage(load: () => Promise<FunctionComponent<Props>>): FunctionComponent<Props> {
  let loaded: FunctionComponent<Props> | null = null;
  let pending: Promise<FunctionComponent<Props>> | null = null;
  return function LazyPage(props: Props) {
    const [Comp, setComp] = useState<FunctionComponent<Props> | null>(() => loaded);
    const [error, setError] = useState<unknown>(null);
    useEffect(() => {
      if (loaded) return;
      pending ??= Promise.all([load(), loadMore()])
        .then(([c]) => (loaded = c))
        .catch((err) => {
          pending = null;
          throw err;
        });
      pending.then((c) => setComp(() => c), setError);
    }, []);
    if (error) return <ErrorNote error={error} />;
    return Comp ? <Comp {...props} /> : <Loading />;
  };
}
