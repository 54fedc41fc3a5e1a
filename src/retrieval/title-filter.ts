import { contentTokens, stem } from '../text.js';
import type { RetrievedItem } from '../model/retrieved-item.js';

/**
 * The original forum audit's production "title gate" (config A): a topic is kept only if its title contains a
 * distinctive word of the question, a content word whose document frequency over all public
 * topic titles is below `maxDf` (a share, e.g. 0.05).
 */
export class TitleFilter {
  private readonly df = new Map<string, number>();
  private readonly total: number;

  constructor(
    titles: readonly string[],
    private readonly maxDf: number,
  ) {
    this.total = titles.length;
    for (const title of titles)
      for (const w of new Set(contentTokens(title).map(stem))) this.df.set(w, (this.df.get(w) ?? 0) + 1);
  }

  /** The question's distinctive words. */
  distinctive(question: string): string[] {
    return [...new Set(contentTokens(question).map(stem))].filter((w) => {
      const df = this.df.get(w) ?? 0;
      return df > 0 && df / Math.max(1, this.total) < this.maxDf;
    });
  }

  /** Keeps the items whose title carries a distinctive word; reports how many were dropped. */
  apply(question: string, items: RetrievedItem[]): { items: RetrievedItem[]; gatedOut: number } {
    const words = new Set(this.distinctive(question));
    const kept = items.filter((it) => contentTokens(it.title).some((w) => words.has(stem(w))));
    return { items: kept, gatedOut: items.length - kept.length };
  }
}
