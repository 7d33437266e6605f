/** SparkPost: the Transmissions API client and its error classifier (docs/providers.md "SparkPost client"). */
export {
  SparkPostClient,
  type SparkPostClientOptions,
  type Transmission,
  type TransmissionAccepted,
  transmissionBody,
} from './sparkpost-client';
export { classifySparkPostResponse, sparkPostErrorText, sparkPostNoAnswer } from './classify-sparkpost-error';
