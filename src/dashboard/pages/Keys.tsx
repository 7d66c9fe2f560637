import { useState } from "preact/hooks"
import { can, liveUnlocked } from "../Access.js"
import type { Answer, CollectionsClient } from "../../client/index.js"
import { dash } from "../calls.js"
import { lagos } from "../Dates.js"
import { forgetSandboxKey, type Mode, sandboxKey, setSandboxKey, useSession } from "../Session.js"
import { Badge, Button, CopyButton, Empty, ErrorBox, Field, Form, Loading, Notice, Section, Select, Table, useAction, useLoad } from "../ui.js"

interface Created { id: string; mode: Mode; clientId: string; clientSecret: string }

export const KeysPage = () => {
  const s = useSession()!
  const approved = liveUnlocked(s.me?.tenant.onboardingStatus)
  const keys = useLoad(() => dash((c) => c.dashboard.listApiKeys({ urlParams: { take: 100 } })), [s.mode])
  const [mode, setMode] = useState<Mode>("test")
  const [created, setCreated] = useState<Created | null>(null)
  const create = useAction()
  const revoke = useAction()
  return (
    <>
      {can(s.me?.user.role, "apiKeys") && <Section title="Create an API key">
        <p>Your integration exchanges a key's client id and secret for a bearer token (POST /api/v1/auth/token).</p>
        <div class="row">
          <Select label="Mode of the new key" name="key-mode" value={mode} onChange={(v) => setMode(v as Mode)}
            options={approved ? [["test", "Test"], ["live", "Live"]] : [["test", "Test"]]} />
          <Button kind="primary" busy={create.busy} onClick={() => create.run(async () => {
            const k = await dash((c) => c.dashboard.createApiKey({ payload: { mode } }))
            setCreated(k)
            // A user without a sandbox key keeps this one for the sandbox actions (test accounts, simulated deposits).
            if (k.mode === "test" && !sandboxKey()) setSandboxKey({ keyId: k.id, clientId: k.clientId, clientSecret: k.clientSecret })
            keys.reload()
          })}>Create {mode} key</Button>
        </div>
        {!approved && <p class="muted" id="live-key-locked">Live keys can be created once your onboarding is approved.</p>}
        <ErrorBox error={create.error} />
        {created && (
          <div class="secret" role="status" aria-live="polite">
            <p><strong>New {created.mode} key.</strong> Copy the secret now: it is shown only once.</p>
            <dl class="kv">
              <dt>Client id</dt><dd><code id="new-client-id">{created.clientId}</code> <CopyButton text={created.clientId} label="Copy the client id" /></dd>
              <dt>Client secret</dt><dd><code id="new-client-secret">{created.clientSecret}</code> <CopyButton text={created.clientSecret} label="Copy the client secret" /></dd>
            </dl>
            {created.mode === "test" && <p class="muted">Unless you already had one, this browser keeps this test key for your sandbox actions (test accounts, simulated deposits), in every tab.</p>}
            <Button onClick={() => setCreated(null)}>I have copied it</Button>
          </div>
        )}
      </Section>}
      <Section title="Your keys">
        <ErrorBox error={keys.error ?? revoke.error} />
        {keys.loading && !keys.data ? <Loading what="keys" /> : (
          <Table caption="API keys, both modes" head={["Client id", "Mode", "Created", "Status", ""]}>
            {keys.data?.data.length === 0 && <Empty cols={5} text="No keys yet." />}
            {keys.data?.data.map((k) => (
              <tr key={k.id}>
                <td><code>{k.clientId}</code></td>
                <td><Badge text={k.mode} /></td>
                <td>{lagos(k.createdAt)}</td>
                <td>{k.revokedAt ? `Revoked ${lagos(k.revokedAt)}` : "Active"}</td>
                <td>{!k.revokedAt && (
                  <Button kind="danger" busy={revoke.busy} label={`Revoke key ${k.clientId}`} onClick={() => {
                    if (!confirm(`Revoke ${k.clientId}? Tokens minted from it stop working at once.`)) return
                    revoke.run(async () => {
                      await dash((c) => c.dashboard.revokeApiKey({ path: { id: k.id } }))
                      forgetSandboxKey(k.id, k.clientId)
                      keys.reload()
                    })
                  }}>Revoke</Button>
                )}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  )
}

type Provider = Answer<CollectionsClient["dashboard"]["provider"]>

const PROVIDER_NAMES: Record<string, string> = { paystack: "Paystack", monnify: "Monnify", sandbox: "Sandbox" }

/** The sandbox's own credentials (the simulator and the sandbox bank sign with them). */
const SandboxCredentials = ({ p }: { p: Provider }) => {
  const [shown, setShown] = useState(false)
  return (
    <>
      <dt>Merchant id</dt><dd><code>{p.merchantId}</code> <CopyButton text={p.merchantId ?? ""} label="Copy the merchant id" /></dd>
      <dt>Webhook secret</dt>
      <dd>
        <code id="webhook-secret">{shown ? p.webhookSecret : "•".repeat(16)}</code>{" "}
        <Button onClick={() => setShown(!shown)}>{shown ? "Hide" : "Show"}</Button>{" "}
        <CopyButton text={p.webhookSecret ?? ""} label="Copy the webhook secret" />
      </dd>
      <dt>Receiver</dt><dd><code>{p.receiverPath}</code></dd>
      <dt>Signature header</dt><dd><code>{p.signatureHeader}</code></dd>
      <dt>Signed string</dt><dd><code>{p.canonicalString}</code></dd>
    </>
  )
}

/** Connect Paystack or Monnify (the keys are proved by the provider before they are saved, and never shown again), or go back to the sandbox. */
const ConnectProvider = ({ mode, current, onDone }: { mode: Mode; current: string; onDone: () => void }) => {
  const [provider, setProvider] = useState<string>(current === "paystack" || current === "monnify" ? current : "paystack")
  const [f, setF] = useState({ secretKey: "", apiKey: "", contractCode: "", walletAccountNumber: "", preferredBanks: "50515" })
  const [bank, setBank] = useState(mode === "test" ? "test-bank" : "wema-bank")
  const set = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v })
  const connect = useAction()
  const prefix = mode === "test" ? "sk_test_" : "sk_live_"
  const monnifyPrefix = mode === "test" ? "MK_TEST_" : "MK_PROD_"
  const label = provider === "sandbox" ? "Use the sandbox" : `Connect ${PROVIDER_NAMES[provider]}`
  return (
    <Form label="Connect a bank provider" onSubmit={() => connect.run(async () => {
      const chosen = provider as "paystack" | "monnify" | "sandbox"
      const body = chosen === "paystack"
        ? { provider: chosen, secretKey: f.secretKey.trim(), preferredBank: bank }
        : chosen === "monnify"
        ? {
          provider: chosen, apiKey: f.apiKey.trim(), secretKey: f.secretKey.trim(), contractCode: f.contractCode.trim(), walletAccountNumber: f.walletAccountNumber.trim(),
          preferredBanks: f.preferredBanks.split(",").map((b) => b.trim()).filter((b) => b !== "")
        }
        : { provider: chosen }
      await dash((c) => c.dashboard.connectProvider({ payload: body }))
      setF({ ...f, secretKey: "", apiKey: "" })
      onDone()
    })}>
      <Select label="Provider" name="provider" value={provider} onChange={setProvider}
        options={[["paystack", "Paystack"], ["monnify", "Monnify"], ...(mode === "test" ? [["sandbox", "Sandbox (built in, no real money)"] as const] : [])]} />
      {provider === "paystack" && (
        <div class="grid2">
          <Field label={`Paystack secret key (${prefix}…)`} name="secretKey" type="password" value={f.secretKey} onInput={set("secretKey")} required
            placeholder={`${prefix}…`} hint="Paystack checks it before it is saved; it is stored encrypted and never shown again." />
          <Select label="Partner bank for new accounts" name="preferredBank" value={bank} onChange={setBank}
            options={[...(mode === "test" ? [["test-bank", "Test Bank (test mode)"] as const] : []), ["wema-bank", "Wema Bank"], ["titan-paystack", "Paystack-Titan"], ["access-bank", "Access Bank"]]} />
        </div>
      )}
      {provider === "monnify" && (
        <div class="grid2">
          <Field label={`Monnify API key (${monnifyPrefix}…)`} name="apiKey" value={f.apiKey} onInput={set("apiKey")} required placeholder={`${monnifyPrefix}…`} />
          <Field label="Monnify client secret key" name="secretKey" type="password" value={f.secretKey} onInput={set("secretKey")} required
            hint="Monnify checks the pair (a login) before it is saved; stored encrypted, never shown again." />
          <Field label="Contract code" name="contractCode" inputMode="numeric" value={f.contractCode} onInput={set("contractCode")} required />
          <Field label="Wallet account number (pays out)" name="walletAccountNumber" inputMode="numeric" value={f.walletAccountNumber} onInput={set("walletAccountNumber")} required />
          <Field label="Partner banks for new accounts (CBN codes)" name="preferredBanks" value={f.preferredBanks} onInput={set("preferredBanks")}
            hint="Comma-separated, e.g. 50515 (Moniepoint) or 035 (Wema); the first account is the NUBAN." />
        </div>
      )}
      <ErrorBox error={connect.error} />
      <Button type="submit" kind="primary" busy={connect.busy}>{label}</Button>
    </Form>
  )
}

export const ProviderPage = () => {
  const s = useSession()!
  const p = useLoad(() => dash((c) => c.dashboard.provider()), [s.mode])
  const [editing, setEditing] = useState(false)
  const d = p.data
  return (
    <Section title={`Bank provider (${s.mode} mode)`}>
      <ErrorBox error={p.error} />
      {d ? (
        <>
          <dl class="kv">
            <dt>Provider</dt>
            <dd id="provider-name">{d.provider === "none" ? <Badge text="Not connected" /> : PROVIDER_NAMES[d.provider] ?? d.provider}</dd>
            {d.connectedAt && <><dt>Connected</dt><dd>{lagos(d.connectedAt)}</dd></>}
            {d.keyHint && <><dt>Secret key</dt><dd><code>…{d.keyHint}</code></dd></>}
            {d.preferredBank && <><dt>Partner bank</dt><dd><code>{d.preferredBank}</code></dd></>}
            {d.contractCode && <><dt>Contract code</dt><dd><code id="contract-code">{d.contractCode}</code></dd></>}
            {d.walletAccountNumber && <><dt>Wallet (pays out)</dt><dd><code>{d.walletAccountNumber}</code></dd></>}
            {d.preferredBanks && <><dt>Partner banks</dt><dd><code>{d.preferredBanks.join(", ")}</code></dd></>}
            {d.provider !== "sandbox" && (
              <><dt>Webhook URL</dt><dd><code id="webhook-url">{d.webhookUrl}</code> <CopyButton text={d.webhookUrl} label="Copy the webhook URL" /></dd></>
            )}
            {d.provider === "sandbox" && <SandboxCredentials p={d} />}
          </dl>
          {d.provider === "paystack" && (
            <Notice>
              In the Paystack dashboard ({s.mode} mode), set the webhook URL above, and turn off "Confirm transfers before sending"
              (transfer OTP): a payout Paystack holds for an OTP fails.
            </Notice>
          )}
          {d.provider === "monnify" && (
            <Notice>
              In the Monnify dashboard (Developers, Webhook URLs), set the webhook URL above for transactions and disbursements; ask Monnify to turn
              off transfer OTP for API transfers and to whitelist this server's IP address: a payout held for an OTP fails.
            </Notice>
          )}
          {d.provider === "none" && <Notice>Live mode moves real money through your Paystack or Monnify account: connect one to open live accounts and send payouts.</Notice>}
          {editing || d.provider === "none"
            ? <ConnectProvider mode={s.mode} current={d.provider} onDone={() => { setEditing(false); p.reload() }} />
            : <Button onClick={() => setEditing(true)}>Change provider</Button>}
        </>
      ) : !p.error && <Loading what="the provider" />}
      <Notice>This is the {s.mode} mode's provider; switch mode to see the other's.</Notice>
    </Section>
  )
}
