// The media library: images uploaded in the panel for posts. The one owner of what may be
// stored (the type from the bytes, the size, no metadata: image.ts), of where an image is used
// and of its deletion; the panel calls these and adds nothing but the page.
import { createHash } from 'node:crypto';
import type { Db } from '../../db/connect.js';
import { isUniqueViolation } from '../../db/errors.js';
import { paged, type Paginated } from '../admin/listing.js';
import type { Acting, AuditService } from '../audit/audit.service.js';
import { invalid, type ValidationError } from '../shared/errors.js';
import { cleanImage, IMAGE_EXTENSION, IMAGE_MIME, MAX_PIXELS, type ImageType } from './image.js';
import { countMedia, deleteMedia, findMediaByHash, findMediaById, findMediaFile, insertMedia, listMedia, postsLinking, type MediaRow } from './media.repository.js';

/** The largest file accepted, in bytes (docs/operations.md). */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** An image as the panel shows it; never its bytes. */
export type MediaItem = {
  id: number;
  name: string;
  type: ImageType;
  size: number;
  width: number;
  height: number;
  /** The address it is served at, the same for as long as it exists. */
  url: string;
  /** What to paste into a post: `![name](url)`. */
  markdown: string;
  createdAt: string;
};

/** A file as a form sent it: its bytes (null when none came or it was over the limit), and its name. */
export type Upload = { bytes: Buffer | null; name: string; tooLarge?: boolean };

export type MediaFile = { mime: string; bytes: Buffer };

/** The path of an image: its hash, and the extension of the type its bytes are. */
export const mediaPath = (hash: string, type: ImageType): string => `/media/${hash}.${IMAGE_EXTENSION[type]}`;

/** Alt text from a file name: `team-photo_2026.jpg` → `team photo 2026`; brackets dropped, they would end the markdown. */
function altOf(name: string): string {
  return name.replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/[[\]()\\]/g, '').replace(/[-_]+/g, ' ').trim().slice(0, 120);
}

function present(row: MediaRow): MediaItem {
  const url = mediaPath(row.hash, row.type);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    size: row.size,
    width: row.width,
    height: row.height,
    url,
    markdown: `![${altOf(row.name)}](${url})`,
    createdAt: row.created_at,
  };
}

/** A file's name as shown: its last path segment, printable, at most 255 characters. */
function displayName(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  const base = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (base === '' ? 'image' : base).slice(0, 255);
}

const refusal = (key: string, replace?: Record<string, string | number>): ValidationError => invalid({ file: [{ key, replace }] });

export class MediaService {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditService,
  ) {}

  /**
   * Stores an uploaded image, or refuses it with a 422 on `file`: none sent, over the size limit,
   * not a PNG, JPEG, WebP, GIF or AVIF by its bytes (an SVG says so), or too many pixels. The
   * same image uploaded again is the same library entry.
   */
  async upload(by: Acting, upload: Upload): Promise<MediaItem> {
    if (upload.tooLarge === true) throw refusal('media.errors.too_large', { max: MAX_UPLOAD_BYTES / 1024 / 1024 });
    if (upload.bytes === null || upload.bytes.length === 0) throw refusal('media.errors.required');
    const image = await cleanImage(upload.bytes);
    if (image === 'svg') throw refusal('media.errors.svg');
    if (image === 'unsupported') throw refusal('media.errors.type');
    if (image === 'too_many_pixels') throw refusal('media.errors.pixels', { max: MAX_PIXELS / 1_000_000 });
    const hash = createHash('sha256').update(image.bytes).digest('hex');
    const known = await findMediaByHash(this.db.kysely, hash);
    if (known !== undefined) return present(known);
    const name = displayName(upload.name);
    let row: MediaRow;
    try {
      row = await insertMedia(this.db.kysely, {
        hash,
        type: image.type,
        name,
        size: image.bytes.length,
        width: image.width,
        height: image.height,
        data: image.bytes,
        uploaded_by: by.actor.id,
        created_at: new Date().toISOString(),
      });
    } catch (error) {
      // The same image, uploaded at the same moment through another instance.
      const stored = isUniqueViolation(error) ? await findMediaByHash(this.db.kysely, hash) : undefined;
      if (stored === undefined) throw error;
      return present(stored);
    }
    await this.audit.recordBy(by, 'media.uploaded', { type: 'media', id: row.id, label: name });
    return present(row);
  }

  /** One page of the library, newest first. */
  list(page: number, perPage: number): Promise<Paginated<MediaItem>> {
    return paged(page, perPage, () => countMedia(this.db.kysely), async (limit, offset) => (await listMedia(this.db.kysely, limit, offset)).map(present));
  }

  async find(id: number): Promise<MediaItem | undefined> {
    const row = await findMediaById(this.db.kysely, id);
    return row === undefined ? undefined : present(row);
  }

  /** The posts (any status, any language) whose markdown shows the image: deleting it would break them. */
  usedBy(item: MediaItem): Promise<{ id: number; title: string; locale: string }[]> {
    // Any extension: the hash alone names the image.
    return postsLinking(this.db.kysely, item.url.slice(0, item.url.lastIndexOf('.')));
  }

  /** Deletes the image; posts that show it keep their markdown and show its alt text. */
  async remove(by: Acting, item: MediaItem): Promise<void> {
    await deleteMedia(this.db.kysely, item.id);
    await this.audit.recordBy(by, 'media.deleted', { type: 'media', id: item.id, label: item.name });
  }

  /** The file at `/media/<hash>.<ext>`, when the extension is the one of its type. */
  async file(hash: string, extension: string): Promise<MediaFile | undefined> {
    const row = await findMediaFile(this.db.kysely, hash);
    if (row === undefined || IMAGE_EXTENSION[row.type] !== extension) return undefined;
    return { mime: IMAGE_MIME[row.type], bytes: row.data };
  }
}
