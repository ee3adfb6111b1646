// How times, durations and long text read on the pages.
import { html } from '../html.js';
/** "2026-11-22 02:35:10 UTC": the same zone for everyone in the organization. */
export function formatTime(iso) {
    return iso ? `${iso.replace('T', ' ').slice(0, 19)} UTC` : '';
}
/** 75 → "1:15", 3725 → "1:02:05". */
export function formatDuration(seconds) {
    if (seconds === null)
        return '';
    const h = Math.floor(seconds / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    const s = String(seconds % 60).padStart(2, '0');
    return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
/** The first `max` characters (by code point), with an ellipsis when cut. */
export function excerpt(text, max) {
    const chars = [...text];
    return chars.length > max ? `${chars.slice(0, max).join('').trimEnd()}…` : text;
}
export const dash = html `<span class="muted">—</span>`;
//# sourceMappingURL=format.js.map