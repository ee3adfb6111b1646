// Server-rendered SVG charts (no script, no library, nothing from a CDN).
// Each chart is an <svg role="img"> named by its <title> and summarised by its
// <desc>, followed by the same numbers as a table inside <details>, so the
// data reads without seeing the picture (on a phone a line per category, each
// number after its series' name). Colours come from classes in the
// stylesheet (the CSP allows no inline styles); the legend names every colour.
import { html, type SafeHtml } from '../html.ts';

export type Tone = 'ok' | 'warn' | 'bad' | 'accent';

export interface Series {
  label: string;
  tone: Tone;
}

export interface Category {
  /** Full label for the table and the bar's tooltip ("2026-11-20"). */
  label: string;
  /** Axis label ("20"), shown under every `labelEvery`-th bar. */
  short: string;
  /** One value per series, stacked in series order from the bottom. */
  values: number[];
}

export interface BarChartInput {
  /** Unique on the page: prefixes the ids of title and desc. */
  id: string;
  title: string;
  /** The text alternative: what the chart shows, in a sentence or two. */
  summary: string;
  series: Series[];
  categories: Category[];
  labelEvery?: number;
  /** Header of the category column in the data table ("Day", "Hour (UTC)"). */
  categoryHeader: string;
  /** A dashed line through one category with a short label and a tooltip (a circuit that opened then); the summary should say it too. */
  mark?: { index: number; label: string; title: string };
}

const WIDTH = 480;
const HEIGHT = 200;
const LEFT = 44;
const RIGHT = 6;
const TOP = 10;
const BOTTOM = 24;

/** The smallest of 1, 2, 5 × 10^n at or above `max` (at least 4, so the axis shows whole numbers). */
export function niceMax(max: number): number {
  if (max <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/** 2500 → "2.5k": axis labels stay short at any scale. */
function axisNumber(value: number): string {
  if (value >= 1000) return `${Number((value / 1000).toFixed(1))}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function legend(series: Series[]) {
  return html`<ul class="legend">${series.map((s) => html`<li><span class="swatch s-${s.tone}" aria-hidden="true"></span>${s.label}</li>`)}</ul>`;
}

function dataTable(input: BarChartInput) {
  return html`<details class="chart-data"><summary>Show the numbers<span class="visually-hidden">: ${input.title}</span></summary>
  <table class="stack numbers"><caption class="visually-hidden">${input.title}</caption>
    <thead><tr><th scope="col">${input.categoryHeader}</th>${input.series.map((s) => html`<th scope="col" class="num">${s.label}</th>`)}</tr></thead>
    <tbody>${input.categories.map((c) => html`<tr><th scope="row" class="plain">${c.label}</th>${c.values.map((v, i) => html`<td class="num" data-label="${input.series[i]!.label}">${v}</td>`)}</tr>`)}</tbody>
  </table>
</details>`;
}

/** Stacked vertical bars, one per category. */
export function barChart(input: BarChartInput): SafeHtml {
  const totals = input.categories.map((c) => c.values.reduce((a, b) => a + b, 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, input.categories.length);
  const barWidth = Math.max(1, slot * 0.72);
  const y = (value: number) => TOP + plotHeight - (value / max) * plotHeight;
  const every = input.labelEvery ?? 1;
  const fixed = (n: number) => n.toFixed(1);

  const grid = [0, max / 2, max].map(
    (v) =>
      html`<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${fixed(y(v))}" y2="${fixed(y(v))}"></line><text class="axis" x="${LEFT - 4}" y="${fixed(y(v) + 4)}" text-anchor="end">${axisNumber(v)}</text>`,
  );
  const bars = input.categories.map((c, i) => {
    const x = LEFT + i * slot + (slot - barWidth) / 2;
    let base = 0;
    const parts = c.values.map((value, s) => {
      if (value === 0) return '';
      const top = y(base + value);
      const height = y(base) - top;
      base += value;
      return html`<rect class="s-${input.series[s]!.tone}" x="${fixed(x)}" y="${fixed(top)}" width="${fixed(barWidth)}" height="${fixed(Math.max(height, 0.5))}"></rect>`;
    });
    const tip = `${c.label}: ${c.values.map((v, s) => `${v} ${input.series[s]!.label.toLowerCase()}`).join(', ')}`;
    const label =
      i % every === 0 || i === input.categories.length - 1
        ? html`<text class="axis" x="${fixed(x + barWidth / 2)}" y="${HEIGHT - 8}" text-anchor="middle">${c.short}</text>`
        : '';
    return html`<g><title>${tip}</title>${parts}</g>${label}`;
  });

  let mark: SafeHtml | '' = '';
  if (input.mark && input.mark.index >= 0 && input.mark.index < input.categories.length) {
    const cx = fixed(LEFT + input.mark.index * slot + slot / 2);
    const nearRight = input.mark.index > input.categories.length * 0.7;
    mark = html`<g class="mark"><title>${input.mark.title}</title><line x1="${cx}" x2="${cx}" y1="${TOP}" y2="${TOP + plotHeight}"></line><text x="${nearRight ? fixed(Number(cx) - 4) : fixed(Number(cx) + 4)}" y="${TOP + 12}" text-anchor="${nearRight ? 'end' : 'start'}">${input.mark.label}</text></g>`;
  }

  return html`<figure class="chart">
  <svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${input.id}-title ${input.id}-desc" focusable="false">
    <title id="${input.id}-title">${input.title}</title>
    <desc id="${input.id}-desc">${input.summary}</desc>
    ${grid}${bars}${mark}
  </svg>
  ${input.series.length > 1 ? legend(input.series) : ''}
  ${dataTable(input)}
</figure>`;
}

export interface Share {
  label: string;
  tone: Tone;
  value: number;
}

/** One horizontal bar split by share (the last 24 hours by outcome), with the counts beside it in text. */
export function shareBar(input: { id: string; title: string; summary: string; shares: Share[] }): SafeHtml {
  const total = input.shares.reduce((a, s) => a + s.value, 0);
  let x = 0;
  const parts =
    total === 0
      ? html`<rect class="empty" x="0" y="0" width="${WIDTH}" height="28"></rect>`
      : input.shares.map((s) => {
          if (s.value === 0) return '';
          const width = (s.value / total) * WIDTH;
          const part = html`<rect class="s-${s.tone}" x="${x.toFixed(1)}" y="0" width="${width.toFixed(1)}" height="28"><title>${s.label}: ${s.value}</title></rect>`;
          x += width;
          return part;
        });
  return html`<figure class="chart">
  <svg class="chart share" viewBox="0 0 ${WIDTH} 28" preserveAspectRatio="none" role="img" aria-labelledby="${input.id}-title ${input.id}-desc" focusable="false">
    <title id="${input.id}-title">${input.title}</title>
    <desc id="${input.id}-desc">${input.summary}</desc>
    ${parts}
  </svg>
  <ul class="legend counts">${input.shares.map((s) => html`<li><span class="swatch s-${s.tone}" aria-hidden="true"></span>${s.label} <strong>${s.value}</strong></li>`)}</ul>
</figure>`;
}
