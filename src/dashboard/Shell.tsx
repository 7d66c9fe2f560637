import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { can, liveUnlocked } from "./Access.js"
import { canSwitchTo, type Mode, type SessionState, signOut, switchMode, useSession } from "./Session.js"
import { Button, ErrorBox, Field, Form, useAction } from "./ui.js"
import { OnboardingPage } from "./pages/Onboarding.js"
import { KeysPage, ProviderPage } from "./pages/Keys.js"
import { AccountDetailPage, AccountsPage } from "./pages/Accounts.js"
import { ReviewPage } from "./pages/Review.js"
import { TransactionDetailPage, TransactionsPage } from "./pages/Transactions.js"
import { PayoutsPage } from "./pages/Payouts.js"
import { AutomationPage } from "./pages/Automation.js"
import { SubMerchantsPage } from "./pages/SubMerchants.js"
import { SettlementPage } from "./pages/Settlement.js"
import { BillingPage, ScheduleDetailPage } from "./pages/Billing.js"
import { WebhooksPage } from "./pages/Webhooks.js"
import { EventsPage } from "./pages/Events.js"
import { InsightsPage } from "./pages/Insights.js"
import { CopilotPage } from "./pages/Copilot.js"
import { TeamPage } from "./pages/Team.js"
import { HomePage } from "./pages/Home.js"

interface NavItem {
  readonly path: string
  readonly label: string
  readonly show?: (s: SessionState) => boolean
}
const role = (s: SessionState) => s.me?.user.role
const NAV: ReadonlyArray<NavItem> = [
  { path: "/", label: "Home" },
  { path: "/onboarding", label: "Onboarding" },
  { path: "/keys", label: "API keys", show: (s) => can(role(s), "apiKeys") },
  { path: "/provider", label: "Provider", show: (s) => can(role(s), "provider") },
  { path: "/accounts", label: "Virtual accounts" },
  { path: "/review", label: "Review queue" },
  { path: "/transactions", label: "Transactions" },
  { path: "/payouts", label: "Payouts" },
  { path: "/automation", label: "Rules & flows" },
  { path: "/sub-merchants", label: "Sub-merchants" },
  { path: "/settlement", label: "Settlement" },
  { path: "/billing", label: "Billing" },
  { path: "/webhooks", label: "Webhooks", show: (s) => can(role(s), "webhooks") },
  { path: "/events", label: "Events", show: (s) => can(role(s), "events") },
  { path: "/insights", label: "Insights" },
  { path: "/copilot", label: "Copilot" },
  { path: "/team", label: "Team" }
]

const page = (route: string): { title: string; body: ComponentChildren } => {
  const [, first = "", second] = route.split("/")
  const arg = second === undefined ? undefined : decodeURIComponent(second)
  switch (first) {
    case "": return { title: "Home", body: <HomePage /> }
    case "onboarding": return { title: "Onboarding", body: <OnboardingPage /> }
    case "keys": return { title: "API keys", body: <KeysPage /> }
    case "provider": return { title: "Bank provider", body: <ProviderPage /> }
    case "accounts": return arg ? { title: `Virtual account ${arg}`, body: <AccountDetailPage accountRef={arg} /> } : { title: "Virtual accounts", body: <AccountsPage /> }
    case "review": return { title: "Review queue", body: <ReviewPage /> }
    case "transactions": return arg ? { title: `Transaction ${arg}`, body: <TransactionDetailPage reference={arg} /> } : { title: "Transactions", body: <TransactionsPage /> }
    case "payouts": return { title: "Payouts", body: <PayoutsPage /> }
    case "automation": return { title: "Rules and flows", body: <AutomationPage /> }
    case "sub-merchants": return { title: "Sub-merchants", body: <SubMerchantsPage /> }
    case "settlement": return { title: "Settlement", body: <SettlementPage /> }
    case "billing": return arg ? { title: "Billing schedule", body: <ScheduleDetailPage id={arg} /> } : { title: "Billing", body: <BillingPage /> }
    case "webhooks": return { title: "Webhooks", body: <WebhooksPage /> }
    case "events": return { title: "Events", body: <EventsPage /> }
    case "insights": return { title: "Insights", body: <InsightsPage /> }
    case "copilot": return { title: "Copilot", body: <CopilotPage /> }
    case "team": return { title: "Team", body: <TeamPage /> }
    default: return { title: "Not found", body: <p>There is no such page. <a href="#/">Go home</a>.</p> }
  }
}

/** The test/live switch: swaps tokens; asks for the password when the other mode's token has expired. */
const ModeSwitch = ({ s }: { s: SessionState }) => {
  const other: Mode = s.mode === "test" ? "live" : "test"
  const [asking, setAsking] = useState(false)
  const [password, setPassword] = useState("")
  const { busy, error, run } = useAction()
  const go = async () => {
    if (!canSwitchTo(other) && !asking) return setAsking(true)
    await run(() => switchMode(other, asking ? password : undefined))
    setAsking(false)
    setPassword("")
  }
  return (
    <div class="mode-switch">
      <div class="switch" role="group" aria-label="Mode">
        {(["test", "live"] as const).map((m) => (
          <button
            key={m}
            type="button"
            class={`switch-opt ${s.mode === m ? "on" : ""}`}
            aria-pressed={s.mode === m ? "true" : "false"}
            disabled={busy}
            onClick={() => m !== s.mode && go()}
          >
            {m === "test" ? "Test" : "Live"}
          </button>
        ))}
      </div>
      {asking && (
        <Form label="Confirm your password to switch mode" class="inline-form" onSubmit={go}>
          <Field label="Password to switch mode" name="switch-password" type="password" value={password} onInput={setPassword} autoComplete="current-password" />
          <Button type="submit" kind="primary" busy={busy}>Switch to {other}</Button>
        </Form>
      )}
      <ErrorBox error={error} />
    </div>
  )
}

export const AppShell = ({ route }: { route: string }) => {
  const s = useSession()!
  const [menuOpen, setMenuOpen] = useState(false)
  const { title, body } = page(route)
  const mainRef = useRef<HTMLElement>(null)
  useEffect(() => {
    document.title = `${title} · ${s.mode === "test" ? "TEST · " : ""}Collections dashboard`
    setMenuOpen(false)
  }, [route, s.mode])
  const active = "/" + (route.split("/")[1] ?? "")
  const approved = liveUnlocked(s.me?.tenant.onboardingStatus)
  return (
    <div class={`shell mode-${s.mode}`} data-mode={s.mode}>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); mainRef.current?.focus() }}>Skip to content</a>
      {s.mode === "test"
        ? <div class="banner banner-test" id="mode-banner" role="note">Test mode: sandbox data only, no real money moves.</div>
        : <div class={`banner ${approved ? "banner-live" : "banner-locked"}`} id="mode-banner" role="note">
            Live mode{approved ? ": real money." : ": locked until an operator approves your onboarding. Live keys and live accounts cannot be created yet."}
          </div>}
      <header class="top">
        <div class="brand">
          <span class="business">{s.me?.tenant.name ?? "Collections"}</span>
          <span class="who">{s.me?.user.email} · <span id="role">{s.me?.user.role}</span></span>
        </div>
        <ModeSwitch s={s} />
        <div class="top-actions">
          <button type="button" class="btn btn-secondary menu-toggle" aria-expanded={menuOpen ? "true" : "false"} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>Menu</button>
          <Button onClick={() => signOut()}>Sign out</Button>
        </div>
      </header>
      <div class="layout">
        <nav id="nav" class={`nav ${menuOpen ? "open" : ""}`} aria-label="Sections">
          <ul>
            {NAV.filter((n) => !n.show || n.show(s)).map((n) => (
              <li key={n.path}>
                <a href={`#${n.path}`} aria-current={active === n.path ? "page" : undefined}>{n.label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" ref={mainRef} tabIndex={-1}>
          <h1>{title}</h1>
          {body}
        </main>
      </div>
    </div>
  )
}
