import { useCallback, useState } from 'react';

type Tone = 'ok' | 'error';

interface Toast {
  readonly id: number;
  readonly text: string;
  readonly tone: Tone;
}

/** The short messages at the bottom of the screen; errors stay longer. */
export const useToasts = () => {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const toast = useCallback((text: string, tone: Tone = 'ok') => {
    const id = Math.random();
    setToasts((t) => [...t, { id, text, tone }]);
    window.setTimeout(
      () => setToasts((t) => t.filter((x) => x.id !== id)),
      tone === 'error' ? 7000 : 3500,
    );
  }, []);
  return { toasts, toast };
};

export const Toasts = ({ toasts }: { toasts: readonly Toast[] }) => (
  <div className="toasts" aria-live="polite">
    {toasts.map((t) => (
      <div key={t.id} className={`toast ${t.tone}`} role={t.tone === 'error' ? 'alert' : 'status'}>
        {t.text}
      </div>
    ))}
  </div>
);
