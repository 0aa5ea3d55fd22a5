import { useEffect, useRef, useState } from 'react';
import { type ApiError, seg } from '../api/client';
import { useApp } from '../app-context';

/**
 * The definition being edited: validated as you type through `POST /dags/validate` (after a
 * short pause, the latest answer winning), saved through `PUT /dags/{fileName}/spec`. A reload of
 * the stored text (`initial`) only replaces text nobody is editing.
 */
export const useSpecDraft = (fileName: string, initial: string, onSaved: () => void) => {
  const { api, toast } = useApp();
  // `base`: the text as last loaded or saved; a reload only replaces text nobody is editing.
  const [base, setBase] = useState(initial);
  const [text, setText] = useState(initial);
  const [errors, setErrors] = useState<string[]>([]);
  const [checking, setChecking] = useState(false);
  const [saving, setSaving] = useState(false);
  const [failure, setFailure] = useState<ApiError>();
  const seq = useRef(0);

  useEffect(() => {
    if (initial === base) return;
    if (text === base) setText(initial);
    setBase(initial);
    // only when the stored text changes
  }, [initial]);

  useEffect(() => {
    const mine = ++seq.current;
    setChecking(true);
    const t = window.setTimeout(() => {
      api
        .post<{ valid: boolean; errors: string[] }>('/dags/validate', {
          spec: text,
          name: fileName,
        })
        .then((r) => {
          if (mine === seq.current) setErrors(r.errors);
        })
        .catch((e: unknown) => {
          if (mine === seq.current) setFailure(e as ApiError);
        })
        .finally(() => {
          if (mine === seq.current) setChecking(false);
        });
    }, 350);
    return () => window.clearTimeout(t);
  }, [api, text, fileName]);

  const save = async () => {
    setSaving(true);
    setFailure(undefined);
    try {
      const r = await api.put<{ errors: string[] }>(`/dags/${seg(fileName)}/spec`, { spec: text });
      if (r.errors.length > 0) {
        setErrors(r.errors);
        toast('Not saved: fix the problems first', 'error');
      } else {
        toast(`Saved ${fileName}`);
        setBase(text);
        onSaved();
      }
    } catch (e) {
      setFailure(e as ApiError);
    } finally {
      setSaving(false);
    }
  };

  const revert = () => setText(base);
  const dirty = text !== base;
  return { text, setText, dirty, errors, checking, saving, failure, save, revert };
};
