// What an uploaded file is, and the image we keep of it: sharp (libvips) reads the bytes and
// says what they are, whatever the file was called, and writes a new file of the same type.
//
// Every upload is decoded and encoded again, never stored as sent: the new file holds pixels
// only, so no EXIF block (a phone's GPS position, its serial number), no XMP or IPTC, no comment
// and nothing appended after the image (a GIF that is also an HTML page, a PNG carrying a
// script) survives. SVG is refused: it is a document that can hold scripts, not pixels.
import sharp, { type Metadata, type Sharp } from 'sharp';

export const IMAGE_TYPES = ['png', 'jpeg', 'webp', 'gif', 'avif'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

export const IMAGE_MIME: Readonly<Record<ImageType, string>> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
};

/** The file extension of a type in its URL. */
export const IMAGE_EXTENSION: Readonly<Record<ImageType, string>> = { png: 'png', jpeg: 'jpg', webp: 'webp', gif: 'gif', avif: 'avif' };

// A decompression bomb (a small file of a huge, blank image) is refused from its header, before
// its pixels are decoded: 40 megapixels is 8000 × 5000, more than any post shows.
export const MAX_PIXELS = 40_000_000;

export type CleanImage = { type: ImageType; bytes: Buffer; width: number; height: number };

/** Why a file is not an image we keep: not a picture at all (or a broken one), an SVG, or too many pixels. */
export type ImageRefusal = 'unsupported' | 'svg' | 'too_many_pixels';

/** The accepted type the bytes are, from what libvips finds in them; AVIF is HEIF with AV1 inside (HEIC is not accepted). */
function typeOf(metadata: Metadata): ImageType | ImageRefusal {
  switch (metadata.format) {
    case 'png':
    case 'jpeg':
    case 'webp':
    case 'gif':
      return metadata.format;
    case 'heif':
      return metadata.compression === 'av1' ? 'avif' : 'unsupported';
    case 'svg':
      return 'svg';
    default:
      return 'unsupported';
  }
}

function encoder(type: ImageType, image: Sharp): Sharp {
  switch (type) {
    case 'png':
      return image.png();
    case 'jpeg':
      return image.jpeg({ quality: 90 });
    case 'webp':
      return image.webp({ quality: 90 });
    case 'gif':
      return image.gif();
    case 'avif':
      return image.avif();
  }
}

/**
 * The image `input` holds, encoded again without its metadata, or why it is refused. The type
 * comes from the bytes only. A photo turned by its EXIF orientation is turned for real first,
 * so dropping the tag does not show it on its side.
 */
export async function cleanImage(input: Buffer): Promise<CleanImage | ImageRefusal> {
  let metadata: Metadata;
  try {
    // Header only: no pixel is decoded to learn the type and the size.
    metadata = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    return 'unsupported';
  }
  const type = typeOf(metadata);
  if (type === 'unsupported' || type === 'svg' || type === 'too_many_pixels') return type;
  if (metadata.width * metadata.height > MAX_PIXELS) return 'too_many_pixels';
  const frames = metadata.pages ?? 1;
  try {
    // Every frame of an animated GIF or WebP; a still image's EXIF orientation applied.
    const image = sharp(input, { animated: frames > 1, limitInputPixels: MAX_PIXELS * Math.max(1, frames), failOn: 'error' });
    if (frames === 1) image.autoOrient();
    const { data, info } = await encoder(type, image).toBuffer({ resolveWithObject: true });
    return { type, bytes: data, width: info.width, height: info.pageHeight ?? info.height };
  } catch {
    // A header that promised an image whose pixels are broken or cut short.
    return 'unsupported';
  }
}
