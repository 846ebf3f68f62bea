// passthrough: forwards everything unchanged. Every hook of the Proxy base class forwards by
// default, so the empty subclass is the whole proxy; the SDK still does the bookkeeping (its own
// request ids on both sides, relaying answers, translating cancellations, initialize).
import { Proxy, register } from "@cordon/sdk-as";

class Passthrough extends Proxy {}

register(new Passthrough());
