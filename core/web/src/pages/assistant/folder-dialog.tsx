/** "Move to folder": a folder name (one in use offered, or a new one), or none. */
import { useState } from 'preact/hooks';
import { t } from '../../lib/i18n.ts';
import { Button } from '../../ui/basics.tsx';
import { Modal } from '../../ui/modal.tsx';

/** The service's limit on a folder's name (definitions/chat.ts MAX_FOLDER). */
const MAX_FOLDER = 100;

export function FolderDialog({
  folder,
  folders,
  onClose,
  onSave,
}: {
  folder: string | null;
  folders: string[];
  onClose: () => void;
  onSave: (folder: string | null) => Promise<void>;
}) {
  const [value, setValue] = useState(folder ?? '');
  const [busy, setBusy] = useState(false);
  const submit = async (next: string | null) => {
    setBusy(true);
    try {
      await onSave(next);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={t('chat_extras.move')} onClose={onClose}>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(value.trim() || null);
        }}
      >
        <label class="field">
          <span class="field-label">{t('chat_extras.folder')}</span>
          <input
            list="chat-folders"
            maxLength={MAX_FOLDER}
            value={value}
            placeholder={t('chat_extras.folder_placeholder')}
            data-testid="folder-input"
            onInput={(e) => setValue(e.currentTarget.value)}
          />
          <datalist id="chat-folders">
            {folders.map((f) => (
              <option key={f} value={f} />
            ))}
          </datalist>
          <span class="hint">{t('chat_extras.folder_hint')}</span>
        </label>
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          {folder && (
            <Button onClick={() => void submit(null)} data-testid="folder-none">
              {t('chat_extras.no_folder')}
            </Button>
          )}
          <Button type="submit" variant="primary" busy={busy} data-testid="folder-save">
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
