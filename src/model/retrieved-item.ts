/**
 * The item every retrieval stage passes on, in the results model so that scoring, evidence and
 * runs speak it without importing the Discourse profile.
 */

/** One retrieved passage: a post (post grain) or a topic represented by its first post. */
export interface RetrievedItem {
  post_id: number;
  topic_id: number;
  post_number: number;
  title: string;
  slug: string;
  category: string;
  posts_count: number;
  /** The post's own text (raw markdown): what content metrics and the evidence block read. */
  text: string;
  reply_to_post_number: number | null;
  /** The channel's own score (cosine similarity, ts_rank_cd, RRF sum or cross-encoder logit). */
  score: number;
}
