// The http(s) links of a mail's text part: for the development mailbox (each one clickable) and
// the development log line (the first one). Only http(s): a `javascript:` or `data:` address in
// a mail is never turned into a link.
const LINK = /https?:\/\/[^\s<>"]+/g;
// Sentence punctuation that may follow a link in prose is not part of it.
const TRAILING = /[.,;:!?)\]'’]+$/;

export type TextPiece = { text: string } | { link: string };

/** The text cut into plain runs and links, in order. */
export function linkify(text: string): TextPiece[] {
  const pieces: TextPiece[] = [];
  let from = 0;
  for (const match of text.matchAll(LINK)) {
    const link = match[0].replace(TRAILING, '');
    if (match.index > from) pieces.push({ text: text.slice(from, match.index) });
    pieces.push({ link });
    from = match.index + link.length;
  }
  if (from < text.length) pieces.push({ text: text.slice(from) });
  return pieces;
}

/** Every link of the text, in order. */
export function linksIn(text: string): string[] {
  return linkify(text).flatMap((piece) => ('link' in piece ? [piece.link] : []));
}
