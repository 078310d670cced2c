/** Public surface of search: embedders, the semantic ranker, vector caches and configuration. */
export { EmbedderError, isEmbedder, type Embedder } from "./embedder.js";
export { UseLiteEmbedder, USE_LITE_DIMENSIONS, type UseLiteEmbedderOptions } from "./use-lite.js";
export { OpenAICompatibleEmbedder, type OpenAICompatibleEmbedderOptions } from "./openai.js";
export { SemanticRanker, FUSION, type SemanticRankerOptions } from "./semantic.js";
export { LexicalRanker, type Ranker, type ScoredId, type SearchDocument } from "./lexical.js";
export { VectorLru, type VectorCache } from "./vector-cache.js";
export { FileVectorCache } from "./file-vector-cache.js";
export {
  SearchSetup,
  parseSearchSpec,
  createEmbedder,
  SEARCH_ENV,
  SEARCH_API_KEY_ENV,
  type EmbedderSpec,
  type SearchOptions,
} from "./config.js";
