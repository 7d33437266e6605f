import type { DeliveryFailure } from '../classify-smtp-error';

/** A type alias (not an interface) so it fits nodemailer's indexed envelope type. */
export type Envelope = {
  from: string;
  to: string[];
};

/** What happened to one envelope recipient. */
export type RecipientResult =
  | { email: string; ok: true; response: string }
  | { email: string; ok: false; failure: DeliveryFailure };

/** Delivers one built message to the envelope's recipients; never throws for delivery problems. */
export interface MessageTransport {
  deliver(envelope: Envelope, raw: Buffer): Promise<RecipientResult[]>;
}
