import { useState } from "preact/hooks"
import { dash } from "../calls.js"
import { count } from "../Plural.js"
import { lagos } from "../Dates.js"
import { formatBps, formatNaira } from "../Money.js"
import { useSession } from "../Session.js"
import type { CustomerInsight } from "../../contract/Insights.js"
import { Badge, Empty, ErrorBox, Loading, Money, Section, Select, Table, useLoad } from "../ui.js"

/** Charts as plain SVG: bars scaled to the largest value, each with its figure written beside it (no colour alone). */

const W = 640
const BarChart = ({ id, title, rows }: { id: string; title: string; rows: ReadonlyArray<{ label: string; parts: ReadonlyArray<{ kobo: number; cls: string; name: string }> }> }) => {
  const max = Math.max(1, ...rows.map((r) => r.parts.reduce((s, p) => s + p.kobo, 0)))
  const rowH = 34
  const labelW = 170
  const valueW = 140
  const barW = W - labelW - valueW
  const h = rows.length * rowH + 8
  return (
    <figure class="chart" id={id}>
      <svg viewBox={`0 0 ${W} ${h}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} preserveAspectRatio="xMinYMin meet">
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{rows.map((r) => `${r.label}: ${r.parts.map((p) => `${p.name} ${formatNaira(p.kobo)}`).join(", ")}`).join("; ")}</desc>
        {rows.map((r, i) => {
          let x = labelW
          const total = r.parts.reduce((s, p) => s + p.kobo, 0)
          return (
            <g key={r.label} transform={`translate(0 ${i * rowH + 4})`} class="bar-row">
              <text x={0} y={20} class="chart-label">{r.label}</text>
              <rect x={labelW} y={4} width={barW} height={22} class="bar-track" />
              {r.parts.map((p) => {
                const w = Math.max(p.kobo > 0 ? 2 : 0, Math.round((p.kobo / max) * barW))
                const el = <rect key={p.name} x={x} y={4} width={w} height={22} class={`bar ${p.cls}`} data-kobo={p.kobo} />
                x += w
                return el
              })}
              <text x={W - valueW + 8} y={20} class="chart-value">{formatNaira(total)}</text>
            </g>
          )
        })}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  )
}

const RateGauge = ({ bps }: { bps: number }) => (
  <figure class="chart" id="chart-collection-rate">
    <svg viewBox={`0 0 ${W} 44`} role="img" aria-label={`Collection rate ${formatBps(bps)}`}>
      <rect x={0} y={8} width={W - 120} height={26} class="bar-track" />
      <rect x={0} y={8} width={Math.round(((W - 120) * Math.min(bps, 10000)) / 10000)} height={26} class="bar bar-collected" />
      <text x={W - 110} y={27} class="chart-value">{formatBps(bps)}</text>
    </svg>
    <figcaption>Collection rate: collected ÷ expected</figcaption>
  </figure>
)

const ScoreBar = ({ c }: { c: CustomerInsight }) => (
  <svg viewBox="0 0 100 12" class="score" role="img" aria-label={`Score ${c.score} of 100`}>
    <rect x={0} y={0} width={100} height={12} class="bar-track" />
    <rect x={0} y={0} width={c.score} height={12} class={`bar band-${c.band.toLowerCase()}`} />
  </svg>
)

export const InsightsPage = () => {
  const s = useSession()!
  const [days, setDays] = useState("28")
  const overview = useLoad(() => dash((c) => c.insights.overview({ urlParams: {} })), [s.mode])
  const aging = useLoad(() => dash((c) => c.insights.aging()), [s.mode])
  const forecast = useLoad(() => dash((c) => c.insights.forecast({ urlParams: { days: Number(days) } })), [s.mode, days])
  const customers = useLoad(() => dash((c) => c.insights.customers({ urlParams: { take: 20 } })), [s.mode])
  const o = overview.data
  return (
    <>
      <Section title="Collections">
        <ErrorBox error={overview.error} />
        {o ? (
          <>
            <RateGauge bps={o.collectionRateBps} />
            <div class="stats">
              <div class="stat"><span>Expected</span><strong><Money kobo={o.expectedKobo} /></strong></div>
              <div class="stat"><span>Collected</span><strong><Money kobo={o.collectedKobo} /></strong></div>
              <div class="stat"><span>Outstanding</span><strong><Money kobo={o.outstandingDeficitKobo} /></strong></div>
              <div class="stat"><span>Pending review</span><strong>{o.risk.pendingReview}</strong><small>{o.risk.highRisk} high risk</small></div>
            </div>
            <BarChart id="chart-reconciliation" title="Deposits by reconciliation outcome"
              rows={Object.entries(o.reconciliation).map(([k, v]) => ({ label: `${k} (${count(v.count, "deposit")})`, parts: [{ kobo: v.amountKobo, cls: "bar-collected", name: k }] }))} />
            <p class="muted">As of {lagos(o.asOf)}.</p>
          </>
        ) : !overview.error && <Loading what="the overview" />}
      </Section>
      <Section title="Receivables aging">
        <ErrorBox error={aging.error} />
        {aging.data && <BarChart id="chart-aging" title={`Outstanding by days past due (total ${formatNaira(aging.data.totalOutstandingKobo)})`}
          rows={aging.data.buckets.map((b) => ({ label: `${b.label} days`, parts: [{ kobo: b.amountKobo, cls: "bar-aging", name: `${b.count} accounts` }] }))} />}
      </Section>
      <Section title="Forecast by week">
        <Select label="Horizon" name="forecast-days" value={days} onChange={setDays} options={[["7", "7 days"], ["28", "4 weeks"], ["90", "90 days"], ["180", "180 days"]]} />
        <ErrorBox error={forecast.error} />
        {forecast.data && <>
          <BarChart id="chart-forecast" title="Expected collections per week: billing due (dark) and run-rate projection (light)"
            rows={forecast.data.weeks.map((w) => ({ label: `From ${lagos(w.weekStart)}`, parts: [{ kobo: w.scheduledKobo, cls: "bar-scheduled", name: "billing due" }, { kobo: w.projectedKobo, cls: "bar-projected", name: "projected" }] }))} />
          <p class="muted">Run rate {formatNaira(forecast.data.runRatePerDayKobo)} a day (last 30 days: {formatNaira(forecast.data.trailing30DayCollectedKobo)}).</p>
        </>}
      </Section>
      <Section title="Customer scores">
        <ErrorBox error={customers.error} />
        <Table caption="Customers, most outstanding first" head={["Customer", "Accounts", "Outstanding", "Score", "Band"]}>
          {customers.data?.data.length === 0 && <Empty cols={5} text="No customers yet." />}
          {customers.data?.data.map((c) => (
            <tr key={c.customerName + c.accountRefs.join()}>
              <td>{c.customerName}{c.email ? <small class="muted"> {c.email}</small> : null}</td>
              <td>{c.accountRefs.join(", ")}</td>
              <td><Money kobo={c.outstandingKobo} /></td>
              <td class="score-cell"><ScoreBar c={c} /> {c.score}</td>
              <td><Badge text={c.band} /></td>
            </tr>
          ))}
        </Table>
      </Section>
    </>
  )
}
