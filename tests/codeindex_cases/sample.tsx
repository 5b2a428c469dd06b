import React from "react";

interface Props {
  label: string;
}

export function Button(props: Props) {
  return <button>{props.label}</button>;
}

export class Panel extends React.Component<Props> {
  render() {
    return <div>{this.props.label}</div>;
  }
}
