import { useState } from "preact/hooks"
import { type Mode, signIn, signUp, takeEndNotice } from "../Session.js"
import { Button, ErrorBox, Field, Form, Notice, Select, useAction } from "../ui.js"

const Centered = ({ title, children }: { title: string; children: preact.ComponentChildren }) => (
  <main id="main" class="auth">
    <div class="card auth-card">
      <p class="brand-line">Collections dashboard</p>
      <h1>{title}</h1>
      {children}
    </div>
  </main>
)

export const LoginPage = () => {
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [mode, setMode] = useState<Mode>("test")
  const [notice] = useState(takeEndNotice)
  const { busy, error, run } = useAction()
  return (
    <Centered title="Sign in">
      {notice && <Notice kind="warn">{notice}</Notice>}
      <Form label="Sign in" onSubmit={() => run(async () => {
        await signIn(email.trim(), password, mode)
        location.hash = "#/"
      })}>
        <Field label="E-mail" name="email" type="email" value={email} onInput={setEmail} autoComplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required />
        <Select label="Start in" name="mode" value={mode} onChange={(v) => setMode(v as Mode)} options={[["test", "Test mode"], ["live", "Live mode"]]} />
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>Sign in</Button>
      </Form>
      <p>New here? <a href="#/signup">Create an account</a></p>
    </Centered>
  )
}

export const SignupPage = () => {
  const [businessName, setBusinessName] = useState("")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const { busy, error, run } = useAction()
  return (
    <Centered title="Create your business account">
      <Form label="Sign up" onSubmit={() => run(async () => {
        await signUp(businessName.trim(), email.trim(), password)
        location.hash = "#/onboarding"
      })}>
        <Field label="Business name" name="businessName" value={businessName} onInput={setBusinessName} autoComplete="organization" required />
        <Field label="E-mail" name="email" type="email" value={email} onInput={setEmail} autoComplete="username" required />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="new-password" hint="At least 10 characters" required />
        <ErrorBox error={error} />
        <Button type="submit" kind="primary" busy={busy}>Sign up</Button>
      </Form>
      <p>Already signed up? <a href="#/login">Sign in</a></p>
    </Centered>
  )
}
