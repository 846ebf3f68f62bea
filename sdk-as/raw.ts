// @cordon/sdk-as/raw — FOR TESTS OF THE HOST ONLY. Not part of the SDK's API.
//
// The bare channel under the SDK: `send` hands the conductor any text, bypassing every rule the
// `Proxy` class keeps (request ids, envelopes, the reserved `_cordon/` namespace). Cordon's own
// hostile-proxy tests use it to attack the conductor from inside the sandbox; a real proxy has no
// reason to, and nothing here is kept stable.
export { send, setReceiver } from "./assembly/abi";
